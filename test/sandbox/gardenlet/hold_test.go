package gardenlet

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestHoldKeepsTheGardenletFromActing: while held, a reconcile of a shoot waits and writes nothing; released, it takes
// the shoot on (here a scheduled, succeeded shoot without the gardenlet's finalizer: the finalizer is all it writes).
func TestHoldKeepsTheGardenletFromActing(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "c-1", UID: "u-1", Generation: 1},
		Spec: gardencorev1beta1.ShootSpec{SeedName: ptr.To("seed-1")},
		Status: gardencorev1beta1.ShootStatus{ObservedGeneration: 1, LastOperation: &gardencorev1beta1.LastOperation{
			Type: gardencorev1beta1.LastOperationTypeCreate, State: gardencorev1beta1.LastOperationStateSucceeded, Progress: 100}}}
	c := fakeclient.NewClientBuilder().WithScheme(Scheme()).WithObjects(shoot).WithStatusSubresource(shoot).Build()
	g := &Gardenlet{client: c, log: logr.Discard(), ops: map[types.UID]operation{}, opts: Options{}.withDefaults()}
	release := g.Hold()
	done := make(chan error, 1)
	go func() {
		_, err := g.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(shoot)})
		done <- err
	}()
	finalizers := func() []string {
		got := &gardencorev1beta1.Shoot{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
			t.Fatal(err)
		}
		return got.Finalizers
	}
	select {
	case err := <-done:
		t.Fatalf("the reconcile ran while the gardenlet was held (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if f := finalizers(); len(f) != 0 {
		t.Fatalf("the held gardenlet wrote finalizers %v", f)
	}
	release()
	release() // a second release is harmless
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the released reconcile: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reconcile did not run after the release")
	}
	if f := finalizers(); len(f) != 1 || f[0] != finalizer {
		t.Errorf("finalizers after the release: %v, want [%s]", f, finalizer)
	}
}
