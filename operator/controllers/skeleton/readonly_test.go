package skeleton_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/fake"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// sharedReader serves one object the way the informer cache does with UnsafeDisableDeepCopy (a struct copy that
// shares the object's maps and slices); without the option it deep-copies it, as the cache does by default. Every
// write fails the test's expectations by being counted.
type sharedReader struct {
	client.Client
	obj    *imv1.GardenerCluster
	unsafe []bool // per Get: whether it asked for no copy
	writes int
}

func (r *sharedReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var o client.GetOptions
	o.ApplyOptions(opts)
	unsafe := o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy
	r.unsafe = append(r.unsafe, unsafe)
	if unsafe {
		*obj.(*imv1.GardenerCluster) = *r.obj
	} else {
		r.obj.DeepCopyInto(obj.(*imv1.GardenerCluster))
	}
	return nil
}

func (r *sharedReader) Status() client.SubResourceWriter { r.writes++; return nil }

func (r *sharedReader) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	r.writes++
	return nil
}

// readHooks read the object's name and nothing else, and ask for what their Result holds.
type readHooks struct{ result skeleton.Result }

func (readHooks) Observe(s *skeleton.State[*imv1.GardenerCluster]) string { return s.Obj.Name }

func (readHooks) Act(context.Context, *skeleton.State[*imv1.GardenerCluster], string, time.Time) (string, error) {
	return "", nil
}

func (h readHooks) Status(context.Context, *skeleton.State[*imv1.GardenerCluster], string, error, time.Time) skeleton.Result {
	return h.result
}

// heavy is an object whose deep copy allocates at least once per managed-fields entry (the entry's FieldsV1), so a
// pass that copies it is told apart by counting allocations, not by timing.
func heavy(entries int) *imv1.GardenerCluster {
	gc := cluster(map[string]string{"a": "b"})
	for i := range entries {
		gc.ManagedFields = append(gc.ManagedFields, metav1.ManagedFieldsEntry{Manager: fmt.Sprint("m", i),
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)})
	}
	return gc
}

// TestAReadOnlyReconcilerCopiesNothingAndWritesNothing: hooks that only read an object's key (the shoot reaper's)
// get the cache's own object, with no deep copy and no status baseline, and the skeleton never writes it; the same
// pass on a writable reconciler copies the object (the counts show both).
func TestAReadOnlyReconcilerCopiesNothingAndWritesNothing(t *testing.T) {
	const entries = 200
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "rid"}}
	allocs := func(readOnly bool) (float64, *sharedReader) {
		c := &sharedReader{obj: heavy(entries)}
		r := &skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: c, Live: c, ReadOnly: readOnly,
			Clock: fake.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			New:   func() *imv1.GardenerCluster { return &imv1.GardenerCluster{} }, Hooks: readHooks{}}
		n := testing.AllocsPerRun(20, func() {
			if _, err := r.Reconcile(t.Context(), req); err != nil {
				t.Fatal(err)
			}
		})
		return n, c
	}

	readOnly, c := allocs(true)
	require.NotContains(t, c.unsafe, false, "a read-only pass read the object with a copy")
	require.Zero(t, c.writes, "a read-only pass wrote")
	require.Less(t, readOnly, float64(entries), "a read-only pass allocated as if it copied the object")

	writable, c := allocs(false)
	require.NotContains(t, c.unsafe, true, "a writable pass read the cache's own object")
	require.Greater(t, writable, float64(entries), "the writable pass did not copy: the count cannot tell the two apart")
	t.Logf("allocations per pass: read-only %.0f, writable %.0f", readOnly, writable)
}

// TestAReadOnlyReconcilerRefusesWhatWouldChangeTheCache: the cached object is shared, so neither a finalizer nor a
// consumed annotation can be handled on it; the pass fails with a reason instead, and writes nothing.
func TestAReadOnlyReconcilerRefusesWhatWouldChangeTheCache(t *testing.T) {
	w := newWorld(t)
	_, err := skeleton.NewReconciler(skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: w.c, Live: w.c,
		Clock: w.clock, Finalizer: finalizer, ReadOnly: true, New: w.r.New, Hooks: w.h})
	require.ErrorContains(t, err, "read-only")

	for _, res := range []skeleton.Result{{ClearAnnotations: []string{"a"}}, {Release: true}} {
		c := &sharedReader{obj: cluster(map[string]string{"a": "b"})}
		r := &skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: c, Live: c, ReadOnly: true, Clock: w.clock,
			New: w.r.New, Hooks: readHooks{result: res}}
		_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "rid"}})
		require.ErrorContains(t, err, "read-only", "result %+v", res)
		require.Zero(t, c.writes, "result %+v", res)
		require.Equal(t, map[string]string{"a": "b"}, c.obj.Annotations, "the shared object was changed")
	}
}
