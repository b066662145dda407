package usecase_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// The kubeconfig Secret as the previous infrastructure manager leaves it: the GardenerCluster's labels plus its
// managed-by and cluster-name labels, its last-sync annotation, no owner annotation of this operator. That manager
// deleted it with the GardenerCluster (by its cluster-name label); so does the operator, also when the
// GardenerCluster is deleted before the operator ever rewrote the Secret. KEB's Secret of the same name without
// those labels is still left alone.
func TestRemovalDeletesThePreviousManagersSecretOnly(t *testing.T) {
	previous := map[string]string{"kyma-project.io/runtime-id": "rid", "kyma-project.io/shoot-name": "c-1",
		"operator.kyma-project.io/internal": "true", wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: "rid"}
	for name, tc := range map[string]struct {
		labels  map[string]string
		deleted bool
	}{
		"previous manager's": {labels: previous, deleted: true},
		"KEB's":              {labels: map[string]string{"kyma-project.io/runtime-id": "rid"}, deleted: false},
	} {
		t.Run(name, func(t *testing.T) {
			x := newRotation(t)
			x.store.Put("kcp-system", "kubeconfig-rid", map[string][]byte{"config": []byte("apiVersion: v1")}, tc.labels,
				map[string]string{"operator.kyma-project.io/last-sync": "2026-11-03T09:00:00Z"})
			req := x.req
			req.Deleting = true
			res, err := x.r.Remove(t.Context(), req)
			require.NoError(t, err)
			require.True(t, res.Release)
			require.Equal(t, !tc.deleted, x.store.Exists("kcp-system", "kubeconfig-rid"))
			if tc.deleted {
				require.Equal(t, []ports.SecretRef{{Namespace: "kcp-system", Name: "kubeconfig-rid", Key: "config"}}, res.Deleted)
			} else {
				require.Len(t, res.Kept, 1)
			}
		})
	}
}
