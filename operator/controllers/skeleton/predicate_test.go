package skeleton_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

func TestIgnoreStatusOnlyLetsThroughWhatAReconcileReads(t *testing.T) {
	old := cluster(map[string]string{"a": "1"})
	old.Labels, old.Generation, old.Finalizers, old.ResourceVersion = map[string]string{"l": "1"}, 1, []string{finalizer}, "7"
	now := metav1.Now()
	cases := []struct {
		name           string
		change         func(*imv1.GardenerCluster)
		labels, others bool // let through with labels true, false
	}{
		{"status only (our own patch)", func(gc *imv1.GardenerCluster) {
			gc.Status.State, gc.ResourceVersion = imv1.GardenerClusterStateReady, "8"
		}, false, false},
		{"managed fields only", func(gc *imv1.GardenerCluster) {
			gc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kim"}}
		}, false, false},
		{"spec (generation)", func(gc *imv1.GardenerCluster) { gc.Generation = 2 }, true, true},
		{"annotation", func(gc *imv1.GardenerCluster) { gc.Annotations["force"] = "true" }, true, true},
		{"deletion", func(gc *imv1.GardenerCluster) { gc.DeletionTimestamp = &now }, true, true},
		{"finalizer added", func(gc *imv1.GardenerCluster) { gc.Finalizers = append(gc.Finalizers, "other") }, true, true},
		{"label", func(gc *imv1.GardenerCluster) { gc.Labels["l"] = "2" }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := old.DeepCopy()
			tc.change(n)
			e := event.UpdateEvent{ObjectOld: old, ObjectNew: n}
			require.Equal(t, tc.labels, skeleton.IgnoreStatusOnly(true).Update(e), "labels read")
			require.Equal(t, tc.others, skeleton.IgnoreStatusOnly(false).Update(e), "labels not read")
		})
	}
	for _, p := range []bool{true, false} {
		require.True(t, skeleton.IgnoreStatusOnly(p).Create(event.CreateEvent{Object: old}))
		require.True(t, skeleton.IgnoreStatusOnly(p).Delete(event.DeleteEvent{Object: old}))
		require.True(t, skeleton.IgnoreStatusOnly(p).Generic(event.GenericEvent{Object: old}))
	}
}
