package contract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// RequestsFixture is a KCP namespace of GardenerClusters behind a KubeconfigRequests implementation.
type RequestsFixture struct {
	Requests  ports.KubeconfigRequests
	Namespace string
	// Put writes a GardenerCluster asking for req to the API server; the implementation's cache, if it has one,
	// may not have seen it. Delete begins its deletion (a finalizer keeps it).
	Put    func(t *testing.T, req ports.KubeconfigRequest)
	Delete func(t *testing.T, name string)
}

// RunKubeconfigRequestsContract runs the KubeconfigRequests contract against fixtures made by newFixture.
func RunKubeconfigRequestsContract(t *testing.T, newFixture func(t *testing.T) RequestsFixture) {
	t.Run("a missing GardenerCluster does not exist; a present one is read as the API server has it now", func(t *testing.T) {
		f := newFixture(t)
		_, exists, err := f.Requests.Confirm(t.Context(), f.Namespace, "rid")
		require.NoError(t, err)
		require.False(t, exists)
		req := ports.KubeconfigRequest{Namespace: f.Namespace, Name: "rid", Shoot: "c-1", Labels: map[string]string{"kyma-project.io/runtime-id": "rid"},
			Secret: ports.SecretRef{Namespace: f.Namespace, Name: "kubeconfig-rid", Key: "config"}, Force: true}
		f.Put(t, req)
		got, exists, err := f.Requests.Confirm(t.Context(), f.Namespace, "rid")
		require.NoError(t, err)
		require.True(t, exists, "a GardenerCluster written a moment ago exists (read live, not from a cache)")
		require.Equal(t, req.Shoot, got.Shoot)
		require.Equal(t, req.Secret, got.Secret)
		require.Equal(t, "rid", got.Labels["kyma-project.io/runtime-id"])
		require.True(t, got.Force)
		require.False(t, got.Deleting)
		req.Force = false
		f.Put(t, req)
		got, _, err = f.Requests.Confirm(t.Context(), f.Namespace, "rid")
		require.NoError(t, err)
		require.False(t, got.Force, "a force annotation removed a moment ago is gone")
		_, exists, err = f.Requests.Confirm(t.Context(), f.Namespace, "another")
		require.NoError(t, err)
		require.False(t, exists, "another GardenerCluster is looked up by its own name")
	})
	t.Run("one being deleted exists and says so", func(t *testing.T) {
		f := newFixture(t)
		f.Put(t, ports.KubeconfigRequest{Namespace: f.Namespace, Name: "rid", Shoot: "c-1",
			Secret: ports.SecretRef{Namespace: f.Namespace, Name: "kubeconfig-rid", Key: "config"}})
		f.Delete(t, "rid")
		got, exists, err := f.Requests.Confirm(t.Context(), f.Namespace, "rid")
		require.NoError(t, err)
		require.True(t, exists)
		require.True(t, got.Deleting)
	})
}
