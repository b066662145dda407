package contract

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kyma-project/kim/core/ports"
)

// IdentityStoreFixture is one fresh IdentityKubeconfigStore with the means to look behind it.
type IdentityStoreFixture struct {
	Store ports.IdentityKubeconfigStore
	// Namespace is where the test may create Secrets; nothing else lives there.
	Namespace string
	// ReadKey reads a key as a consumer would, bypassing Store; safe for concurrent use.
	ReadKey KeyReader
	// PutForeign stores a Secret as another writer would, bypassing Store.
	PutForeign func(ctx context.Context, ref ports.SecretRef, data map[string][]byte, labels, annotations map[string]string) error
	// ConcurrentWrites is how many writes the atomicity check performs.
	ConcurrentWrites int
}

// RunIdentityKubeconfigStoreContract runs the IdentityKubeconfigStore contract against fixtures made by newFixture.
func RunIdentityKubeconfigStoreContract(t *testing.T, newFixture func(t *testing.T) IdentityStoreFixture) {
	secret := func(f IdentityStoreFixture, name, kc string) ports.IdentityKubeconfigSecret {
		return ports.IdentityKubeconfigSecret{Ref: ports.SecretRef{Namespace: f.Namespace, Name: name, Key: "config"},
			Labels: map[string]string{"ours": "yes"}, Annotations: map[string]string{"issued": kc}, Kubeconfig: []byte(kc)}
	}
	// put writes s as a caller must: a create when absent, else pinned to the version read.
	put := func(t *testing.T, f IdentityStoreFixture, s ports.IdentityKubeconfigSecret) error {
		t.Helper()
		var err error
		if s.ExpectAbsent, s.Precondition, err = guard(t, f.Store.ReadMetadata, s.Ref); err != nil {
			return err
		}
		return f.Store.Write(t.Context(), s)
	}

	t.Run("a missing Secret is ErrSecretNotFound", func(t *testing.T) {
		f := newFixture(t)
		for _, mode := range []ports.ReadMode{ports.ReadCached, ports.ReadLive} {
			if _, err := f.Store.ReadMetadata(t.Context(), ports.SecretRef{Namespace: f.Namespace, Name: "missing", Key: "config"}, mode); !errors.Is(err, ports.ErrSecretNotFound) {
				t.Errorf("ReadMetadata(mode %d): %v, want ErrSecretNotFound", mode, err)
			}
		}
	})

	t.Run("Write creates and replaces with the given labels and annotations, keeping others'", func(t *testing.T) {
		f := newFixture(t)
		s := secret(f, "sa-kubeconfig", "kc-1")
		if err := f.PutForeign(t.Context(), s.Ref, map[string][]byte{"config": []byte("old"), "other": []byte("keep")},
			map[string]string{"team": "x"}, map[string]string{"note": "keep"}); err != nil {
			t.Fatal(err)
		}
		if err := put(t, f, s); err != nil {
			t.Fatalf("Write: %v", err)
		}
		md, err := f.Store.ReadMetadata(t.Context(), s.Ref, ports.ReadLive)
		if err != nil {
			t.Fatal(err)
		}
		if md.Labels["ours"] != "yes" || md.Labels["team"] != "x" || md.Annotations["issued"] != "kc-1" || md.Annotations["note"] != "keep" || !md.HasKubeconfig {
			t.Errorf("metadata after Write: %+v", md)
		}
		mustKey(t, f.ReadKey, s.Ref, []byte("kc-1"))
		other := s.Ref
		other.Key = "other"
		mustKey(t, f.ReadKey, other, []byte("keep"))
		if err := put(t, f, secret(f, "sa-kubeconfig", "")); err == nil {
			t.Error("an empty kubeconfig was written")
		}
		mustKey(t, f.ReadKey, s.Ref, []byte("kc-1"))
	})

	t.Run("writes and deletes carry what was checked", func(t *testing.T) {
		f := newFixture(t)
		s := secret(f, "sa-pre", "kc-1")
		s.ExpectAbsent = true
		if err := f.Store.Write(t.Context(), s); err != nil {
			t.Fatalf("create: %v", err)
		}
		if err := f.Store.Write(t.Context(), s); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("create over an existing Secret: %v, want ErrConflict", err)
		}
		md, err := f.Store.ReadMetadata(t.Context(), s.Ref, ports.ReadLive)
		if err != nil {
			t.Fatal(err)
		}
		if err := put(t, f, secret(f, "sa-pre", "kc-2")); err != nil { // the version moves
			t.Fatal(err)
		}
		stale := secret(f, "sa-pre", "kc-stale")
		stale.Precondition = ports.Precondition{UID: md.UID, ResourceVersion: md.ResourceVersion}
		if err := f.Store.Write(t.Context(), stale); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("write on a stale version: %v, want ErrConflict", err)
		}
		if err := f.Store.Delete(t.Context(), s.Ref, ports.Precondition{UID: "another-uid"}); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("delete of another UID: %v, want ErrConflict", err)
		}
		mustKey(t, f.ReadKey, s.Ref, []byte("kc-2"))
		for i := range 2 {
			if err := f.Store.Delete(t.Context(), s.Ref, ports.Precondition{UID: md.UID}); err != nil {
				t.Errorf("delete #%d: %v", i+1, err)
			}
		}
		if _, found, err := f.ReadKey(t.Context(), s.Ref); found || err != nil {
			t.Errorf("after Delete: found=%v err=%v", found, err)
		}
	})

	t.Run("a concurrent reader never sees a missing or empty kubeconfig while it is replaced", func(t *testing.T) {
		f := newFixture(t)
		s := secret(f, "sa-atomic", "kc-0")
		if err := put(t, f, s); err != nil {
			t.Fatal(err)
		}
		n := max(f.ConcurrentWrites, 1)
		readWhileWriting(t, f.ReadKey, s.Ref, n, func(i int) error { return put(t, f, secret(f, "sa-atomic", fmt.Sprintf("kc-%d", i))) })
		mustKey(t, f.ReadKey, s.Ref, fmt.Appendf(nil, "kc-%d", n))
	})
}
