// Package contract holds the test suites every implementation of a port must pass: the in-memory fakes in the fast
// unit run and the real adapters in the integration run, so a fake cannot drift from the behaviour it stands for.
package contract

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// SecretStoreFixture is one fresh store under test with the means to look behind it.
type SecretStoreFixture struct {
	// Store is the implementation under test.
	Store ports.KubeconfigSecretStore
	// Namespace is where the test may create Secrets; nothing else lives there.
	Namespace string
	// ReadKey reads the data of ref's key as a consumer would, bypassing Store; found is false when the Secret does
	// not exist. It must be safe for concurrent use.
	ReadKey func(ctx context.Context, ref ports.SecretRef) (data []byte, found bool, err error)
	// PutForeign stores a Secret as another writer would (for example an older operator), bypassing Store.
	PutForeign func(ctx context.Context, ref ports.SecretRef, data map[string][]byte, labels, annotations map[string]string) error
	// ConcurrentWrites is how many writes the atomicity check performs (a real API server is slower than memory).
	ConcurrentWrites int
}

// RunKubeconfigSecretStoreContract runs the store contract against fixtures made by newFixture (one per subtest).
func RunKubeconfigSecretStoreContract(t *testing.T, newFixture func(t *testing.T) SecretStoreFixture) {
	t.Run("reading a missing Secret is ErrSecretNotFound", func(t *testing.T) {
		f := newFixture(t)
		for _, mode := range []ports.ReadMode{ports.ReadCached, ports.ReadLive} {
			_, err := f.Store.ReadMetadata(t.Context(), ref(f, "missing"), mode)
			if !errors.Is(err, ports.ErrSecretNotFound) {
				t.Errorf("ReadMetadata(mode %d) of a missing Secret: err = %v, want ErrSecretNotFound", mode, err)
			}
		}
		if _, found, err := f.Store.CachedMetadata(t.Context(), ref(f, "missing")); err != nil || found {
			t.Errorf("CachedMetadata of a missing Secret: found %v, err %v; want not found, no error", found, err)
		}
	})

	t.Run("Write creates the Secret in the format consumers expect", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-rid")
		in := secretFor(r, "rid", []byte("kubeconfig-1"), map[string]string{"kyma-project.io/runtime-id": "rid",
			wire.LabelManagedBy: "lifecycle-manager"})
		if err := write(t, f, in); err != nil {
			t.Fatalf("Write: %v", err)
		}
		md := mustRead(t, f, r)
		wantLabels := map[string]string{"kyma-project.io/runtime-id": "rid", wire.LabelManagedBy: wire.ManagedByValue,
			kubeconfig.LabelClusterName: "rid"}
		for k, v := range wantLabels {
			if md.Labels[k] != v {
				t.Errorf("label %s = %q, want %q (labels %v)", k, md.Labels[k], v, md.Labels)
			}
		}
		wantAnn := map[string]string{
			kubeconfig.AnnotationLastSync:  "2026-11-03T10:00:00Z",
			kubeconfig.AnnotationExpiresAt: "2026-11-04T10:00:00Z",
			kubeconfig.AnnotationOwner:     f.Namespace + "/rid",
		}
		for k, v := range wantAnn {
			if md.Annotations[k] != v {
				t.Errorf("annotation %s = %q, want %q", k, md.Annotations[k], v)
			}
		}
		if !md.HasKubeconfig {
			t.Error("HasKubeconfig = false after Write")
		}
		mustKey(t, f.ReadKey, r, []byte("kubeconfig-1"))
	})

	t.Run("Write replaces the kubeconfig and keeps what others set", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-old")
		if err := f.PutForeign(t.Context(), r, map[string][]byte{r.Key: []byte("old"), "other": []byte("keep")},
			map[string]string{"team": "x", wire.LabelManagedBy: wire.ManagedByValue}, map[string]string{"note": "keep"}); err != nil {
			t.Fatalf("PutForeign: %v", err)
		}
		in := secretFor(r, "old", []byte("new"), map[string]string{"a": "1"})
		if err := write(t, f, in); err != nil {
			t.Fatalf("Write over a foreign Secret: %v", err)
		}
		mustKey(t, f.ReadKey, r, []byte("new"))
		other := r
		other.Key = "other"
		mustKey(t, f.ReadKey, other, []byte("keep"))
		md := mustRead(t, f, r)
		if md.Labels["team"] != "x" || md.Labels["a"] != "1" || md.Annotations["note"] != "keep" {
			t.Errorf("labels %v / annotations %v: foreign label/annotation lost or owner label missing", md.Labels, md.Annotations)
		}
		if md.Annotations[kubeconfig.AnnotationLastSync] == "" {
			t.Error("last-sync annotation missing after Write over a foreign Secret")
		}
	})

	t.Run("Write refuses an empty kubeconfig and leaves the Secret alone", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-empty")
		if err := write(t, f, secretFor(r, "empty", []byte("good"), nil)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if err := write(t, f, secretFor(r, "empty", nil, nil)); err == nil {
			t.Error("Write of an empty kubeconfig succeeded, want an error")
		}
		mustKey(t, f.ReadKey, r, []byte("good"))
	})

	t.Run("EnsureLabels adds and overwrites labels without touching the kubeconfig", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-labels")
		if err := f.Store.EnsureLabels(t.Context(), r, map[string]string{"a": "1"}); !errors.Is(err, ports.ErrSecretNotFound) {
			t.Errorf("EnsureLabels on a missing Secret: err = %v, want ErrSecretNotFound", err)
		}
		if err := write(t, f, secretFor(r, "labels", []byte("kc"), map[string]string{"kyma-project.io/global-account-id": "ga-1"})); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if err := f.Store.EnsureLabels(t.Context(), r, map[string]string{"kyma-project.io/global-account-id": "ga-2", "new": "v"}); err != nil {
			t.Fatalf("EnsureLabels: %v", err)
		}
		md := mustRead(t, f, r)
		if md.Labels["kyma-project.io/global-account-id"] != "ga-2" || md.Labels["new"] != "v" ||
			md.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
			t.Errorf("labels after EnsureLabels: %v", md.Labels)
		}
		mustKey(t, f.ReadKey, r, []byte("kc"))
	})

	t.Run("Delete removes the Secret and is idempotent", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-del")
		if err := write(t, f, secretFor(r, "del", []byte("kc"), nil)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		for i := range 2 {
			if err := f.Store.Delete(t.Context(), r, ports.Precondition{}); err != nil {
				t.Fatalf("Delete #%d: %v", i+1, err)
			}
		}
		if _, found, err := f.ReadKey(t.Context(), r); err != nil || found {
			t.Errorf("after Delete: found=%v err=%v, want gone", found, err)
		}
		if _, err := f.Store.ReadMetadata(t.Context(), r, ports.ReadLive); !errors.Is(err, ports.ErrSecretNotFound) {
			t.Errorf("ReadMetadata after Delete: err = %v, want ErrSecretNotFound", err)
		}
	})

	t.Run("cached reads and ListOwnedBy catch up with writes", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-owned")
		if err := write(t, f, secretFor(r, "owned", []byte("kc"), nil)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		eventually(t, "cached metadata shows the write", func(c *assert.CollectT) {
			md, err := f.Store.ReadMetadata(t.Context(), r, ports.ReadCached)
			assert.NoError(c, err)
			assert.NotEmpty(c, md.Annotations[kubeconfig.AnnotationLastSync], "last-sync annotation")
		})
		eventually(t, "CachedMetadata shows the write", func(c *assert.CollectT) {
			md, found, err := f.Store.CachedMetadata(t.Context(), r)
			assert.NoError(c, err)
			assert.True(c, found && md.HasKubeconfig, "found with its kubeconfig")
			assert.NotEmpty(c, md.Annotations[kubeconfig.AnnotationLastSync], "last-sync annotation")
		})
		eventually(t, "ListOwnedBy finds the Secret", func(c *assert.CollectT) {
			refs, err := f.Store.ListOwnedBy(t.Context(), f.Namespace, "owned")
			assert.NoError(c, err)
			assert.Equal(c, []ports.SecretRef{{Namespace: r.Namespace, Name: r.Name}}, refs)
		})
		for _, owner := range [][2]string{{f.Namespace, "someone-else"}, {"other-namespace", "owned"}} {
			refs, err := f.Store.ListOwnedBy(t.Context(), owner[0], owner[1])
			if err != nil || len(refs) != 0 {
				t.Errorf("ListOwnedBy(%s/%s) = %v, %v; want nothing", owner[0], owner[1], refs, err)
			}
		}
	})

	t.Run("writes and deletes carry what was checked", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-pre")
		first := secretFor(r, "pre", []byte("kc-1"), nil)
		first.ExpectAbsent = true
		first.Shoot = kubeconfig.ShootRef{Name: "c-1", UID: "shoot-uid-1"}
		if err := f.Store.Write(t.Context(), first); err != nil {
			t.Fatalf("create: %v", err)
		}
		md := mustRead(t, f, r)
		if md.Name != r.Name || md.UID == "" || md.ResourceVersion == "" {
			t.Errorf("metadata lacks identity: %+v", md)
		}
		if md.Annotations[kubeconfig.AnnotationShootName] != "c-1" || md.Annotations[kubeconfig.AnnotationShootUID] != "shoot-uid-1" {
			t.Errorf("the shoot the kubeconfig was issued for is not recorded: %v", md.Annotations)
		}
		again := secretFor(r, "pre", []byte("kc-other"), nil)
		again.ExpectAbsent = true
		if err := f.Store.Write(t.Context(), again); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("create over an existing Secret: %v, want ErrConflict", err)
		}
		if err := f.Store.EnsureLabels(t.Context(), r, map[string]string{"moved": "on"}); err != nil { // the version moves
			t.Fatalf("EnsureLabels: %v", err)
		}
		stale := secretFor(r, "pre", []byte("kc-stale"), nil)
		stale.Precondition = ports.Precondition{UID: md.UID, ResourceVersion: md.ResourceVersion}
		if err := f.Store.Write(t.Context(), stale); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("write on a stale version: %v, want ErrConflict", err)
		}
		if err := f.Store.Delete(t.Context(), r, ports.Precondition{UID: "another-uid"}); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("delete of another UID: %v, want ErrConflict", err)
		}
		mustKey(t, f.ReadKey, r, []byte("kc-1"))
		if err := f.Store.Delete(t.Context(), r, ports.Precondition{UID: md.UID}); err != nil {
			t.Errorf("delete with the UID: %v", err)
		}
	})

	t.Run("a concurrent reader never sees a missing or empty kubeconfig while it is replaced", func(t *testing.T) {
		f := newFixture(t)
		r := ref(f, "kubeconfig-atomic")
		if err := write(t, f, secretFor(r, "atomic", []byte("kc-0"), nil)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		n := max(f.ConcurrentWrites, 1)
		readWhileWriting(t, f.ReadKey, r, n, func(i int) error {
			return write(t, f, secretFor(r, "atomic", fmt.Appendf(nil, "kc-%d", i), nil))
		})
		mustKey(t, f.ReadKey, r, fmt.Appendf(nil, "kc-%d", n))
	})
}

var (
	contractIssued  = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	contractExpires = contractIssued.Add(24 * time.Hour)
)

// write writes s as a caller must: a create when the Secret does not exist, otherwise pinned to the version read.
func write(t *testing.T, f SecretStoreFixture, s ports.KubeconfigSecret) error {
	t.Helper()
	var err error
	if s.ExpectAbsent, s.Precondition, err = guard(t, f.Store.ReadMetadata, s.Ref); err != nil {
		return err
	}
	return f.Store.Write(t.Context(), s)
}

func ref(f SecretStoreFixture, name string) ports.SecretRef {
	return ports.SecretRef{Namespace: f.Namespace, Name: name, Key: "config"}
}

func secretFor(r ports.SecretRef, owner string, kc []byte, labels map[string]string) ports.KubeconfigSecret {
	return ports.KubeconfigSecret{Ref: r, OwnerNamespace: r.Namespace, OwnerName: owner, OwnerLabels: labels,
		Kubeconfig: kc, IssuedAt: contractIssued, ExpiresAt: contractExpires}
}

func mustRead(t *testing.T, f SecretStoreFixture, r ports.SecretRef) ports.KubeconfigSecretMetadata {
	t.Helper()
	md, err := f.Store.ReadMetadata(t.Context(), r, ports.ReadLive)
	if err != nil {
		t.Fatalf("ReadMetadata(%s): %v", r, err)
	}
	return md
}
