package skeleton_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// predecessor is a finalizer of a system the operator replaced, for the same duty as finalizer.
const predecessor = "previous.kyma-project.io/deletion-hook"

func withPredecessor(t *testing.T, objs ...client.Object) *world {
	w := newWorld(t, objs...)
	w.r.Predecessors = []string{predecessor}
	return w
}

// An object deleted before the operator ever reconciled it carries only the predecessor's finalizer: it is
// finalized all the same, kept until released, and then let go.
func TestPredecessorsFinalizerAloneGoesThroughFinalize(t *testing.T) {
	w := withPredecessor(t, deleting(predecessor))

	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, []string{"finalize"}, w.h.calls)
	require.Equal(t, []string{predecessor}, w.get(t).Finalizers, "kept until Finalize releases it")
	require.Equal(t, imv1.GardenerClusterStateDeleting, w.get(t).Status.State)

	w.h.finalize = skeleton.Result{Release: true}
	_, err = w.reconcile(t)
	require.NoError(t, err)
	var gc imv1.GardenerCluster
	err = w.c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "rid"}, &gc)
	require.True(t, apierrors.IsNotFound(err), "released: the object goes (%v, finalizers %v)", err, gc.Finalizers)
}

// Both finalizers, among another component's: the release removes both, in one write, and nothing else.
func TestReleaseRemovesOursAndThePredecessorsOnly(t *testing.T) {
	w := withPredecessor(t, deleting(predecessor, "someone.else/finalizer", finalizer))
	patches := 0
	w.r.Client = countingPatches{Client: w.c, n: &patches}
	w.h.finalize = skeleton.Result{Release: true}

	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, []string{"someone.else/finalizer"}, w.get(t).Finalizers)
	require.Equal(t, 1, patches, "both finalizers go in one write")
}

// Only another component's finalizer: the object is not this reconciler's to finalize.
func TestAnotherComponentsFinalizerIsNotTakenOver(t *testing.T) {
	w := withPredecessor(t, deleting("someone.else/finalizer"))
	w.h.finalize = skeleton.Result{Release: true}

	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Empty(t, w.h.calls)
	require.Equal(t, []string{"someone.else/finalizer"}, w.get(t).Finalizers)
}

// A live object keeps the predecessor's finalizer (a rollback to the previous system still finds it) and gets ours.
func TestALiveObjectKeepsThePredecessorsFinalizer(t *testing.T) {
	gc := cluster(nil)
	gc.Finalizers = []string{predecessor}
	w := withPredecessor(t, gc)

	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, []string{"observe", "act", "status"}, w.h.calls)
	require.Equal(t, []string{predecessor, finalizer}, w.get(t).Finalizers)
}

type countingPatches struct {
	client.Client
	n *int
}

func (c countingPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	*c.n++
	return c.Client.Patch(ctx, obj, patch, opts...)
}
