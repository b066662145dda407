package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// cachedStore is the kubeconfig store as the operator's cache sees it: the cache holds only the operator's
// labelled Secrets (unlabelled ones are missing from it), and every read that reaches the API server is counted:
// ReadLive, and ReadCached when it has to confirm a miss.
type cachedStore struct {
	*fake.KubeconfigSecretStore
	unlabelled map[string]bool // Secret names the cache does not hold
	apiReads   int
}

func (s *cachedStore) ReadMetadata(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	if _, found, _ := s.CachedMetadata(ctx, ref); mode == ports.ReadLive || !found {
		s.apiReads++
	}
	return s.KubeconfigSecretStore.ReadMetadata(ctx, ref, mode)
}

func (s *cachedStore) CachedMetadata(ctx context.Context, ref ports.SecretRef) (ports.KubeconfigSecretMetadata, bool, error) {
	if s.unlabelled[ref.Name] {
		return ports.KubeconfigSecretMetadata{}, false, nil
	}
	return s.KubeconfigSecretStore.CachedMetadata(ctx, ref)
}

func newCachedRotation(t *testing.T) (*rotation, *cachedStore) {
	t.Helper()
	x := newRotation(t)
	s := &cachedStore{KubeconfigSecretStore: x.store, unlabelled: map[string]bool{}}
	x.r.Store = s
	return x, s
}

// TestRotationReadsTheSecretLiveOnce (issue 29): the first kubeconfig of a GardenerCluster reads its (missing)
// Secret from the API server once, for the live decision before Gardener is asked. Its cached decision does not
// confirm the miss: a missing Secret is always issued for, and every issue is decided again live.
func TestRotationReadsTheSecretLiveOnce(t *testing.T) {
	x, s := newCachedRotation(t)
	res := x.rotate(t, x.req, &x.req)
	require.True(t, res.Written)
	require.Equal(t, 1, s.apiReads, "live reads of the Secret for the first kubeconfig")

	done := x.req
	done.History = kubeconfig.History{Issued: true, Succeeded: true}
	s.apiReads = 0
	res = x.rotate(t, done, &done)
	require.False(t, res.Requested)
	require.Zero(t, s.apiReads, "a valid kubeconfig in the cache costs no live read")
}

// TestRotationDecidesLiveOnSecretsTheCacheMisses: a Secret without the operator's label is not in the cache; the
// decision about it is the same as before the cache was trusted with misses.
func TestRotationDecidesLiveOnSecretsTheCacheMisses(t *testing.T) {
	t.Run("a foreign Secret is refused as not owned, not for its name", func(t *testing.T) {
		x, s := newCachedRotation(t)
		x.store.Put("kcp-system", "db-credentials", map[string][]byte{"config": []byte("not ours")}, nil, nil)
		s.unlabelled["db-credentials"] = true
		foreign := x.req
		foreign.Secret.Name = "db-credentials"
		res := x.rotate(t, foreign, &foreign)
		require.Equal(t, kubeconfig.ReasonSecretNotOwned, res.Status.Reason)
		require.Zero(t, x.issuer.TotalCalls())
	})
	t.Run("the valid kubeconfig of an older GardenerCluster is kept and labelled", func(t *testing.T) {
		x, s := newCachedRotation(t)
		issued := x.now.Add(-time.Hour)
		x.store.Put("kcp-system", "kubeconfig-rid", map[string][]byte{"config": []byte("kc")}, nil, map[string]string{
			kubeconfig.AnnotationLastSync: kubeconfig.FormatTime(issued), kubeconfig.AnnotationExpiresAt: kubeconfig.FormatTime(issued.Add(24 * time.Hour))})
		s.unlabelled["kubeconfig-rid"] = true
		done := x.req
		done.History = kubeconfig.History{Issued: true, Succeeded: true}
		res := x.rotate(t, done, &done)
		require.False(t, res.Requested, "a valid kubeconfig the cache missed cost a Gardener call")
		require.Zero(t, x.issuer.TotalCalls())
		require.NotEmpty(t, x.store.Changes(), "its labels are set, so the cache holds it from now on")
	})
}
