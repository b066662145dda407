package gardenlet

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestStatusWritesFromAStaleReadConflict: a progress report decided on a shoot read before its Create succeeded
// must not reach the shoot. A merge patch of the progress alone (the state unchanged from the stale read) made a
// succeeded Create succeed again at 5 %, with a new time: every such write was a new reconcile time for the operator.
func TestStatusWritesFromAStaleReadConflict(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "c-1"},
		Status: gardencorev1beta1.ShootStatus{LastOperation: &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate,
			State: gardencorev1beta1.LastOperationStateProcessing, Progress: 95}}}
	c := fakeclient.NewClientBuilder().WithScheme(Scheme()).WithObjects(shoot).WithStatusSubresource(shoot).Build()
	g := &Gardenlet{client: c}
	stale := &gardencorev1beta1.Shoot{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), stale); err != nil {
		t.Fatal(err)
	}
	current := stale.DeepCopy()
	if err := g.setSucceeded(t.Context(), current, gardencorev1beta1.LastOperationTypeCreate); err != nil {
		t.Fatal(err)
	}

	err := g.setLastOperation(t.Context(), stale, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing, 5,
		"Creating infrastructure, control plane and worker nodes (simulated)", nil)
	if !apierrors.IsConflict(err) {
		t.Errorf("progress written from a stale read: err %v, want a conflict", err)
	}
	got := &gardencorev1beta1.Shoot{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
		t.Fatal(err)
	}
	if op := got.Status.LastOperation; op.State != gardencorev1beta1.LastOperationStateSucceeded || op.Progress != 100 {
		t.Errorf("the succeeded Create became %s at %d %%", op.State, op.Progress)
	}
}
