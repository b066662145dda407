package contract

import (
	"errors"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// BindingsFixture is one store of credentials bindings with helpers acting as the other parties (KEB, shoots).
type BindingsFixture struct {
	Bindings ports.CredentialsBindings
	// Create stores a new binding with labels and returns its name (unique per call).
	Create func(t *testing.T, labels map[string]string) string
	// Labels reads a binding's labels as its owner sees them.
	Labels func(t *testing.T, name string) map[string]string
	// Relabel changes a label as another writer would (value "" removes it).
	Relabel func(t *testing.T, name, key, value string)
	// PutShoot creates a shoot named shootName whose spec.credentialsBindingName is binding.
	PutShoot func(t *testing.T, shootName, binding string)
}

// RunCredentialsBindingsContract runs the CredentialsBindings contract against fixtures made by newFixture (one per
// subtest; bindings are fresh per Create, shoots are not removed between subtests).
func RunCredentialsBindingsContract(t *testing.T, newFixture func(t *testing.T) BindingsFixture) {
	t.Run("a missing binding is not found, not an error", func(t *testing.T) {
		f := newFixture(t)
		b, err := f.Bindings.Get(t.Context(), "no-such-binding")
		require.NoError(t, err)
		require.False(t, b.Exists)
	})

	t.Run("the labels KEB reads count only with the value true; any dirty label is seen", func(t *testing.T) {
		f := newFixture(t)
		name := f.Create(t, map[string]string{"shared": "yes", "internal": "true", "dirty": "false"})
		b, err := f.Bindings.Get(t.Context(), name)
		require.NoError(t, err)
		require.True(t, b.Exists)
		require.False(t, b.Shared, "shared=yes is not shared for KEB")
		require.True(t, b.Internal)
		require.False(t, b.Dirty, "dirty=false is not dirty for KEB's step")
		require.True(t, b.DirtyLabelled, "but KEB's pool skips it (selector !dirty)")
		require.NotEmpty(t, b.ResourceVersion)
	})

	t.Run("SetDirty adds dirty=true and changes nothing else; RemoveDirty takes only it away", func(t *testing.T) {
		f := newFixture(t)
		name := f.Create(t, map[string]string{"tenantName": "ga-1", "hyperscalerType": "aws"})
		// The labels as they are (Gardener adds its own provider label): the write adds dirty to exactly these.
		before := f.Labels(t, name)
		want := maps.Clone(before)
		want["dirty"] = "true"
		b, err := f.Bindings.Get(t.Context(), name)
		require.NoError(t, err)
		require.NoError(t, f.Bindings.SetDirty(t.Context(), name, b.ResourceVersion))
		require.Equal(t, want, f.Labels(t, name))
		b, err = f.Bindings.Get(t.Context(), name)
		require.NoError(t, err)
		require.True(t, b.Dirty)
		require.NoError(t, f.Bindings.SetDirty(t.Context(), name, b.ResourceVersion), "idempotent")
		b, err = f.Bindings.Get(t.Context(), name)
		require.NoError(t, err)
		require.NoError(t, f.Bindings.RemoveDirty(t.Context(), name, b.ResourceVersion))
		require.Equal(t, before, f.Labels(t, name))
	})

	t.Run("a write pinned to an old observation is a conflict and changes nothing", func(t *testing.T) {
		f := newFixture(t)
		name := f.Create(t, map[string]string{"tenantName": "ga-1"})
		b, err := f.Bindings.Get(t.Context(), name)
		require.NoError(t, err)
		f.Relabel(t, name, "tenantName", "ga-2") // KEB assigned it meanwhile
		before := f.Labels(t, name)
		err = f.Bindings.SetDirty(t.Context(), name, b.ResourceVersion)
		require.True(t, errors.Is(err, ports.ErrConflict), "SetDirty on a stale observation: %v", err)
		require.Equal(t, before, f.Labels(t, name))
		f.Relabel(t, name, "dirty", "true")
		err = f.Bindings.RemoveDirty(t.Context(), name, b.ResourceVersion)
		require.True(t, errors.Is(err, ports.ErrConflict), "RemoveDirty on a stale observation: %v", err)
		require.Equal(t, "true", f.Labels(t, name)["dirty"])
		err = f.Bindings.SetDirty(t.Context(), "no-such-binding", b.ResourceVersion)
		require.True(t, errors.Is(err, ports.ErrConflict), "SetDirty on a missing binding: %v", err)
	})

	t.Run("UsedBy lists the shoots naming the binding, except the one named", func(t *testing.T) {
		f := newFixture(t)
		name := f.Create(t, nil)
		other := f.Create(t, nil)
		users, err := f.Bindings.UsedBy(t.Context(), name, "")
		require.NoError(t, err)
		require.Empty(t, users)
		f.PutShoot(t, "cb-use-1", name)
		f.PutShoot(t, "cb-use-2", name)
		f.PutShoot(t, "cb-use-3", other)
		users, err = f.Bindings.UsedBy(t.Context(), name, "")
		require.NoError(t, err)
		require.Equal(t, []string{"cb-use-1", "cb-use-2"}, users)
		users, err = f.Bindings.UsedBy(t.Context(), name, "cb-use-1")
		require.NoError(t, err)
		require.Equal(t, []string{"cb-use-2"}, users)
	})
}
