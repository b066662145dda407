package contract

import (
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// AccessFixture is one fresh KCP namespace behind an AccessObjects implementation.
type AccessFixture struct {
	Access ports.AccessObjects
	// Namespace is where the test's runtimes live; nothing else lives there.
	Namespace string
	// OwnerUID is the UID of a Runtime the GardenerClusters can be owned by.
	OwnerUID string
	// SetKubeconfig writes the runtime's kubeconfig Secret as the GardenerCluster controller does, expiring at
	// expires; the zero time writes it as the previous infrastructure manager did, without a recorded expiry.
	SetKubeconfig func(t *testing.T, namespace, runtimeID string, expires time.Time)
	// AddLabel sets a label on the runtime's GardenerCluster as someone else (KEB) would.
	AddLabel func(t *testing.T, namespace, runtimeID, key, value string)
	// Labels reads the labels of the runtime's GardenerCluster (from the API, not a cache).
	Labels func(t *testing.T, namespace, runtimeID string) map[string]string
}

// RunAccessObjectsContract runs the AccessObjects contract against fixtures made by newFixture (one per subtest).
func RunAccessObjectsContract(t *testing.T, newFixture func(t *testing.T) AccessFixture) {
	spec := func(f AccessFixture, id string) ports.GardenerClusterSpec {
		return ports.GardenerClusterSpec{Namespace: f.Namespace, RuntimeID: id, OwnerUID: f.OwnerUID, ShootName: "c-" + id[:4],
			SecretName: kubeconfig.SecretName(id), SecretKey: kubeconfig.SecretKey, SKRDomain: "c.kyma.example",
			Labels: map[string]string{"kyma-project.io/runtime-id": id}}
	}
	inSync := func(t *testing.T, f AccessFixture, s ports.GardenerClusterSpec, want bool, what string) {
		t.Helper()
		eventually(t, what, func(c *assert.CollectT) {
			got, err := f.Access.InSync(t.Context(), s)
			assert.NoError(c, err)
			assert.Equal(c, want, got, "InSync")
		})
	}

	t.Run("Ensure creates the GardenerCluster; InSync follows it and is idempotent", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "a1b2c3d4")
		got, err := f.Access.InSync(t.Context(), s)
		require.NoError(t, err)
		require.False(t, got, "a missing GardenerCluster is not in sync")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		inSync(t, f, s, true, "in sync after Ensure")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		inSync(t, f, s, true, "in sync after a second Ensure")
	})

	t.Run("labels others added are kept and do not make it drift; a spec label with another value does", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "b2c3d4e5")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		inSync(t, f, s, true, "in sync after Ensure")
		f.AddLabel(t, f.Namespace, s.RuntimeID, "kyma-project.io/region", "eu-west-1")
		inSync(t, f, s, true, "a label someone else added is no drift (subset, not equality)")
		changed := s
		changed.Labels = maps.Clone(s.Labels)
		changed.Labels["kyma-project.io/runtime-id"] = "another"
		inSync(t, f, changed, false, "a spec label with another value is drift")
		require.NoError(t, f.Access.Ensure(t.Context(), changed))
		inSync(t, f, changed, true, "in sync after Ensure with the new label")
		withRegion := changed
		withRegion.Labels = maps.Clone(changed.Labels)
		withRegion.Labels["kyma-project.io/region"] = "eu-west-1"
		inSync(t, f, withRegion, true, "Ensure kept the label someone else added")
	})

	t.Run("initial labels are set at creation where the spec's labels do not set them, and never later", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "f6a7b8c9")
		s.InitialLabels = map[string]string{"operator.kyma-project.io/internal": "true", "kyma-project.io/runtime-id": "not-this"}
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		inSync(t, f, s, true, "in sync after Ensure")
		got := f.Labels(t, f.Namespace, s.RuntimeID)
		require.Equal(t, "true", got["operator.kyma-project.io/internal"], "an initial label is set at creation")
		require.Equal(t, s.RuntimeID, got["kyma-project.io/runtime-id"], "a spec label wins over an initial one")
		f.AddLabel(t, f.Namespace, s.RuntimeID, "operator.kyma-project.io/internal", "false")
		eventually(t, "the changed label seen", func(c *assert.CollectT) {
			assert.Equal(c, "false", f.Labels(t, f.Namespace, s.RuntimeID)["operator.kyma-project.io/internal"])
		})
		inSync(t, f, s, true, "an initial label someone changed is no drift")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		require.Equal(t, "false", f.Labels(t, f.Namespace, s.RuntimeID)["operator.kyma-project.io/internal"],
			"Ensure does not set an initial label again")

		existing := spec(f, "a7b8c9d0") // created before, without initial labels (as KEB's are)
		require.NoError(t, f.Access.Ensure(t.Context(), existing))
		inSync(t, f, existing, true, "in sync after Ensure")
		withInitial := existing
		withInitial.InitialLabels = map[string]string{"operator.kyma-project.io/managed-by": "infrastructure-manager"}
		inSync(t, f, withInitial, true, "initial labels an existing GardenerCluster lacks are no drift")
		require.NoError(t, f.Access.Ensure(t.Context(), withInitial))
		_, set := f.Labels(t, f.Namespace, existing.RuntimeID)["operator.kyma-project.io/managed-by"]
		require.False(t, set, "an existing GardenerCluster does not get initial labels")
	})

	t.Run("another shoot or Secret is drift; an empty domain does not compare the annotation", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "c3d4e5f6")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		inSync(t, f, s, true, "in sync after Ensure")
		other := s
		other.ShootName = "c-other"
		inSync(t, f, other, false, "another shoot name is drift")
		other = s
		other.SecretName = "kubeconfig-other"
		inSync(t, f, other, false, "another Secret is drift")
		other = s
		other.SKRDomain = ""
		inSync(t, f, other, true, "a spec without a domain does not compare it")
		other.SKRDomain = "other.kyma.example"
		inSync(t, f, other, false, "another domain is drift")
	})

	t.Run("KubeconfigReady needs a Secret with a kubeconfig that has not expired", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "d4e5f6a7")
		now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
		ready := func(want ports.KubeconfigState, what string) {
			t.Helper()
			eventually(t, what, func(c *assert.CollectT) {
				got, err := f.Access.KubeconfigReady(t.Context(), f.Namespace, s.RuntimeID, now)
				assert.NoError(c, err)
				assert.Equal(c, want, got, "KubeconfigReady")
			})
		}
		ready(ports.KubeconfigMissing, "no Secret")
		f.SetKubeconfig(t, f.Namespace, s.RuntimeID, time.Time{})
		ready(ports.KubeconfigUnrecorded, "the previous manager's Secret, no recorded expiry")
		f.SetKubeconfig(t, f.Namespace, s.RuntimeID, now.Add(time.Hour))
		ready(ports.KubeconfigValid, "a Secret valid for an hour")
		f.SetKubeconfig(t, f.Namespace, s.RuntimeID, now.Add(-time.Minute))
		ready(ports.KubeconfigMissing, "an expired kubeconfig")
	})

	t.Run("Remove deletes the GardenerCluster and the Secret and says gone once they are", func(t *testing.T) {
		f := newFixture(t)
		s := spec(f, "e5f6a7b8")
		require.NoError(t, f.Access.Ensure(t.Context(), s))
		f.SetKubeconfig(t, f.Namespace, s.RuntimeID, time.Now().Add(time.Hour))
		inSync(t, f, s, true, "in sync after Ensure")
		eventually(t, "Remove reports gone", func(c *assert.CollectT) {
			gone, err := f.Access.Remove(t.Context(), f.Namespace, s.RuntimeID)
			assert.NoError(c, err)
			assert.True(c, gone, "gone")
		})
		inSync(t, f, s, false, "not in sync once removed")
		ready, err := f.Access.KubeconfigReady(t.Context(), f.Namespace, s.RuntimeID, time.Now())
		require.NoError(t, err)
		require.Equal(t, ports.KubeconfigMissing, ready, "the Secret is gone with it")
		gone, err := f.Access.Remove(t.Context(), f.Namespace, "never-existed")
		require.NoError(t, err)
		require.True(t, gone, "removing what never existed is gone at once")
	})
}
