package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// liveCluster is the API server's view of one GardenerCluster (nil: gone).
type liveCluster struct{ req *ports.KubeconfigRequest }

func (l *liveCluster) Confirm(context.Context, string, string) (ports.KubeconfigRequest, bool, error) {
	if l.req == nil {
		return ports.KubeconfigRequest{}, false, nil
	}
	return *l.req, true, nil
}

type rotation struct {
	now    time.Time
	issuer *fake.KubeconfigIssuer
	store  *fake.KubeconfigSecretStore
	garden *fake.Garden
	r      *usecase.Rotator
	req    ports.KubeconfigRequest
}

func newRotation(t *testing.T) *rotation {
	t.Helper()
	now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	clock := fake.NewClock(now)
	policy, err := kubeconfig.NewPolicy(24*time.Hour, 0.6)
	require.NoError(t, err)
	x := &rotation{now: now, issuer: fake.NewKubeconfigIssuer(clock), store: fake.NewKubeconfigSecretStore(), garden: fake.NewGarden(clock)}
	x.r = &usecase.Rotator{Issuer: x.issuer, Store: x.store, Shoots: x.garden, Policy: policy}
	x.issuer.AddShoot("c-1")
	_, err = x.garden.Apply(t.Context(), ports.ShootApply{Spec: shoot.Spec{Name: "c-1"}, RuntimeID: "rid"})
	require.NoError(t, err)
	x.req = ports.KubeconfigRequest{Namespace: "kcp-system", Name: "rid", Shoot: "c-1",
		Secret: ports.SecretRef{Namespace: "kcp-system", Name: "kubeconfig-rid", Key: "config"}}
	return x
}

func (x *rotation) rotate(t *testing.T, req ports.KubeconfigRequest, live *ports.KubeconfigRequest) usecase.RotationResult {
	t.Helper()
	res, err := x.r.Rotate(t.Context(), req, &liveCluster{live}, x.now)
	require.NoError(t, err)
	return res
}

func TestRotationIssuesOnlyWhatIsDueAndConfirmed(t *testing.T) {
	x := newRotation(t)
	res := x.rotate(t, x.req, &x.req)
	require.True(t, res.Written)
	require.Equal(t, kubeconfig.ReasonSecretCreated, res.Status.Reason)
	require.Equal(t, 1, x.issuer.TotalCalls())

	done := x.req
	done.History = kubeconfig.History{Issued: true, Succeeded: true}
	res = x.rotate(t, done, &done)
	require.False(t, res.Requested, "nothing due: no Gardener call")
	require.True(t, res.Status.Keep)

	stale := done
	stale.Force = true // the cache still shows the force annotation the last rotation consumed
	res = x.rotate(t, stale, &done)
	require.False(t, res.Requested, "a stale force annotation cost a Gardener call")
	require.True(t, res.Confirmed)

	res = x.rotate(t, stale, &stale)
	require.True(t, res.Written)
	require.True(t, res.ClearForce)
	require.Equal(t, kubeconfig.ReasonSecretRotated, res.Status.Reason)
	require.Equal(t, 2, x.issuer.TotalCalls(), "one rotation, one request")

	res = x.rotate(t, stale, nil)
	require.True(t, res.Gone, "a GardenerCluster gone at confirmation gets nothing")
	require.Equal(t, 2, x.issuer.TotalCalls())
}

func TestRotationRefusesWhatIsNotTheClustersOwn(t *testing.T) {
	x := newRotation(t)
	x.store.Put("kcp-system", "db-credentials", map[string][]byte{"config": []byte("not ours")}, nil, nil)
	foreign := x.req
	foreign.Secret.Name = "db-credentials"
	res := x.rotate(t, foreign, &foreign)
	require.Equal(t, kubeconfig.ReasonSecretNotOwned, res.Status.Reason)
	require.Zero(t, x.issuer.TotalCalls())

	other := x.req
	other.Name = "rid-other"
	other.Secret.Name = "kubeconfig-rid-other"
	res = x.rotate(t, other, &other)
	require.Equal(t, kubeconfig.ReasonShootNotOfRuntime, res.Status.Reason, "the shoot belongs to runtime rid")
	require.Zero(t, x.issuer.TotalCalls())
	require.Empty(t, x.store.Changes(), "a refusal writes nothing")
}

func TestRotationFailuresBecomeStatus(t *testing.T) {
	x := newRotation(t)
	x.issuer.SetShootError("c-1", errors.Join(ports.ErrShootNotReady, errors.New("no address yet")))
	res := x.rotate(t, x.req, &x.req)
	require.Equal(t, kubeconfig.ReasonWaitingForShoot, res.Status.Reason)
	require.True(t, res.Requested)

	x.issuer.AddShoot("c-1")
	x.store.WriteErr = errors.New("etcd full")
	res = x.rotate(t, x.req, &x.req)
	require.Equal(t, kubeconfig.ReasonFailedToWriteSecret, res.Status.Reason)
	require.True(t, res.Status.Retry)
}

func TestRemovalDeletesOnlyOwnedSecrets(t *testing.T) {
	x := newRotation(t)
	x.rotate(t, x.req, &x.req)
	x.store.Put("kcp-system", "db-credentials", map[string][]byte{"k": []byte("v")}, nil, nil)
	moved := x.req
	moved.Secret.Name = "db-credentials" // it names someone else's Secret now; its own is found by owner
	res, err := x.r.Remove(t.Context(), moved)
	require.NoError(t, err)
	require.True(t, res.Release)
	require.Equal(t, []ports.SecretRef{{Namespace: "kcp-system", Name: "db-credentials", Key: "config"}}, res.Kept)
	require.True(t, x.store.Exists("kcp-system", "db-credentials"))
	require.False(t, x.store.Exists("kcp-system", "kubeconfig-rid"))

	x.rotate(t, x.req, &x.req)
	deleted, err := x.r.RemoveOrphans(t.Context(), "kcp-system", "rid", &liveCluster{&x.req})
	require.NoError(t, err)
	require.Empty(t, deleted, "the cache was behind: the GardenerCluster exists")
	deleted, err = x.r.RemoveOrphans(t.Context(), "kcp-system", "rid", &liveCluster{})
	require.NoError(t, err)
	require.Len(t, deleted, 1)
}
