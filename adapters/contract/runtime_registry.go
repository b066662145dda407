package contract

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// RegistryFixture is one fresh KCP namespace behind a RuntimeRegistry.
type RegistryFixture struct {
	Registry  ports.RuntimeRegistry
	Namespace string
	// Put creates a Runtime as KEB does; Exists tells whether one exists (and whether it carries the restore
	// annotation).
	Put    func(t *testing.T, runtimeID, shootName string)
	Exists func(t *testing.T, runtimeID string) (exists, restored bool)
	// Document is a recorded Runtime (as the Runtime controller records it) of runtimeID in namespace with shoot.
	Document func(runtimeID, namespace, shootName string) []byte
}

// RunRuntimeRegistryContract runs the RuntimeRegistry contract against fixtures made by newFixture.
func RunRuntimeRegistryContract(t *testing.T, newFixture func(t *testing.T) RegistryFixture) {
	claims := func(t *testing.T, f RegistryFixture, id, shoot string) bool {
		t.Helper()
		ok, err := f.Registry.Claims(t.Context(), id, shoot)
		require.NoError(t, err)
		return ok
	}
	t.Run("a Runtime claims its shoot, and only its shoot", func(t *testing.T) {
		f := newFixture(t)
		require.False(t, claims(t, f, "rt-claims", "c-one"), "no Runtime, no claim")
		f.Put(t, "rt-claims", "c-one")
		require.True(t, claims(t, f, "rt-claims", "c-one"), "the Runtime claims its shoot (read live, at once)")
		require.False(t, claims(t, f, "rt-claims", "c-two"), "a Runtime of the ID naming another shoot does not claim it")
		require.False(t, claims(t, f, "rt-other", "c-one"), "another ID does not claim it")
	})
	t.Run("Recreate creates the recorded Runtime with the restore annotation, dry runs write nothing", func(t *testing.T) {
		f := newFixture(t)
		req := ports.RestoreRequest{Document: f.Document("rt-restore", f.Namespace, "c-restore"), RuntimeID: "rt-restore",
			Namespace: f.Namespace, ShootName: "c-restore"}
		require.NoError(t, f.Registry.Recreate(t.Context(), req, true))
		exists, _ := f.Exists(t, "rt-restore")
		require.False(t, exists, "a dry run created the Runtime")
		require.NoError(t, f.Registry.Recreate(t.Context(), req, false))
		exists, restored := f.Exists(t, "rt-restore")
		require.True(t, exists && restored, "Runtime exists %v with the restore annotation %v", exists, restored)
		require.True(t, claims(t, f, "rt-restore", "c-restore"))
		require.NoError(t, f.Registry.Recreate(t.Context(), req, false), "an existing Runtime is left as it is")
	})
	t.Run("a document that describes another runtime, namespace or shoot is refused", func(t *testing.T) {
		f := newFixture(t)
		for what, doc := range map[string][]byte{
			"another runtime ID": f.Document("rt-else", f.Namespace, "c-x"),
			"another namespace":  f.Document("rt-x", "elsewhere", "c-x"),
			"another shoot":      f.Document("rt-x", f.Namespace, "c-else"),
			"no document at all": []byte("{not json"),
		} {
			err := f.Registry.Recreate(t.Context(), ports.RestoreRequest{Document: doc, RuntimeID: "rt-x", Namespace: f.Namespace,
				ShootName: "c-x"}, false)
			require.True(t, errors.Is(err, ports.ErrInvalidRestoreDocument), "%s: %v", what, err)
			exists, _ := f.Exists(t, "rt-x")
			require.False(t, exists, "%s: a Runtime was created", what)
		}
	})
}
