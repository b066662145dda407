package gardenlet

import (
	"context"
	"errors"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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

// TestAnOperationIsForgottenOnlyOnceItsEndIsWritten: when the write of a finished operation's success conflicts, the
// retry finishes the same operation. Forgetting it before the write made the retry start the operation again from
// 5 % (with the status writes pinned to the version read, shoots then stayed in Processing under load).
func TestAnOperationIsForgottenOnlyOnceItsEndIsWritten(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "c-1", UID: "u-1"},
		Status: gardencorev1beta1.ShootStatus{LastOperation: &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate,
			State: gardencorev1beta1.LastOperationStateProcessing, Progress: 95}}}
	conflicts := 1
	c := fakeclient.NewClientBuilder().WithScheme(Scheme()).WithObjects(shoot).WithStatusSubresource(shoot).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}, obj.GetName(), errors.New("changed"))
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	g := &Gardenlet{client: c, opts: Defaults(), log: logr.Discard(), ops: map[types.UID]operation{}}
	create := gardencorev1beta1.LastOperationTypeCreate
	started := time.Now().Add(-time.Hour) // long past its duration: the next step ends it
	g.ops[shoot.UID] = operation{kind: create, started: started}

	read := func() *gardencorev1beta1.Shoot {
		got := &gardencorev1beta1.Shoot{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if _, err := g.advance(t.Context(), logr.Discard(), read(), create, g.ops[shoot.UID]); !apierrors.IsConflict(err) {
		t.Fatalf("first end: err %v, want the planted conflict", err)
	}
	rec, fresh := g.track(read(), create, time.Now())
	if fresh || !rec.started.Equal(started) {
		t.Fatalf("after a conflicting end the operation started again (fresh %t, started %s, want %s)", fresh, rec.started, started)
	}
	if _, err := g.advance(t.Context(), logr.Discard(), read(), create, rec); err != nil {
		t.Fatal(err)
	}
	if op := read().Status.LastOperation; op.State != gardencorev1beta1.LastOperationStateSucceeded || op.Progress != 100 {
		t.Errorf("the retried end wrote %s at %d %%, want Succeeded at 100 %%", op.State, op.Progress)
	}
	if _, ok := g.ops[shoot.UID]; ok {
		t.Error("the operation is still tracked after its end was written")
	}
}
