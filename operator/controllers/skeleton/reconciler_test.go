package skeleton_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/fake"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

const finalizer = "test.kyma-project.io/finalizer"

// hooks is a controller whose "use case" echoes the shoot name into the status; each hook records that it ran.
type hooks struct {
	calls       []string
	observeErr  error
	result      skeleton.Result
	finalize    skeleton.Result
	finalizeErr error
	gone        int
	sawFinal    bool // the finalizer was in the API server when Observe ran
	c           client.Client
}

func (h *hooks) Observe(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster]) (string, error) {
	h.calls = append(h.calls, "observe")
	var live imv1.GardenerCluster
	if err := h.c.Get(ctx, s.Key(), &live); err == nil {
		h.sawFinal = slices.Contains(live.Finalizers, finalizer)
	}
	return s.Obj.Spec.Shoot.Name, h.observeErr
}

func (h *hooks) Act(_ context.Context, _ *skeleton.State[*imv1.GardenerCluster], q string, now time.Time) (string, error) {
	h.calls = append(h.calls, "act")
	return q + "@" + now.Format(time.RFC3339), nil
}

func (h *hooks) Status(_ context.Context, s *skeleton.State[*imv1.GardenerCluster], r string, _ time.Time) skeleton.Result {
	h.calls = append(h.calls, "status")
	s.Obj.Status.State = imv1.GardenerClusterState(r)
	return h.result
}

func (h *hooks) Finalize(_ context.Context, s *skeleton.State[*imv1.GardenerCluster], _ time.Time) (skeleton.Result, error) {
	h.calls = append(h.calls, "finalize")
	s.Obj.Status.State = imv1.GardenerClusterStateDeleting
	return h.finalize, h.finalizeErr
}

func (h *hooks) Gone(_ context.Context, _ *skeleton.State[*imv1.GardenerCluster], _ time.Time) (skeleton.Result, error) {
	h.gone++
	return skeleton.Result{}, nil
}

type world struct {
	c        client.Client
	h        *hooks
	r        *skeleton.Reconciler[*imv1.GardenerCluster, string, string]
	recorder *events.FakeRecorder
	clock    *fake.Clock
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, imv1.AddToScheme(scheme))
	c := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&imv1.GardenerCluster{}).Build()
	w := &world{c: c, h: &hooks{c: c}, recorder: events.NewFakeRecorder(10), clock: fake.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	w.r = &skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: c, Live: c, Clock: w.clock, Recorder: w.recorder,
		Finalizer: finalizer, New: func() *imv1.GardenerCluster { return &imv1.GardenerCluster{} }, Hooks: w.h}
	return w
}

func cluster(annotations map[string]string) *imv1.GardenerCluster {
	return &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rid", Annotations: annotations},
		Spec: imv1.GardenerClusterSpec{Shoot: imv1.Shoot{Name: "c-1"}}}
}

func (w *world) reconcile(t *testing.T) (ctrl.Result, error) {
	t.Helper()
	return w.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "rid"}})
}

func (w *world) get(t *testing.T) *imv1.GardenerCluster {
	t.Helper()
	var gc imv1.GardenerCluster
	require.NoError(t, w.c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "rid"}, &gc))
	return &gc
}

func TestReconcileRunsTheHooksInOrderAfterTheFinalizer(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.h.result = skeleton.Result{RequeueAfter: time.Minute, Events: []skeleton.Event{{Reason: "Done", Action: "Test", Message: "done"}}}

	res, err := w.reconcile(t)

	require.NoError(t, err)
	require.Equal(t, time.Minute, res.RequeueAfter)
	require.Equal(t, []string{"observe", "act", "status"}, w.h.calls)
	require.True(t, w.h.sawFinal, "the finalizer must be in the API server before the use case runs")
	gc := w.get(t)
	require.Equal(t, imv1.GardenerClusterState("c-1@2026-01-02T03:04:05Z"), gc.Status.State, "status from the clock read once")
	require.Contains(t, gc.Finalizers, finalizer)
	require.Equal(t, "Normal Done done", <-w.recorder.Events)
}

func TestStatusIsPatchedOnlyWhenItChanged(t *testing.T) {
	w := newWorld(t, cluster(nil))
	_, err := w.reconcile(t)
	require.NoError(t, err)
	rv := w.get(t).ResourceVersion

	_, err = w.reconcile(t) // same clock, same status
	require.NoError(t, err)
	require.Equal(t, rv, w.get(t).ResourceVersion, "an unchanged status was written")

	w.clock.Step(time.Second)
	_, err = w.reconcile(t)
	require.NoError(t, err)
	require.NotEqual(t, rv, w.get(t).ResourceVersion, "a changed status was not written")
}

func TestObserveErrorWritesNothing(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.h.observeErr = errors.New("cannot read")
	_, err := w.reconcile(t)
	require.ErrorContains(t, err, "cannot read")
	require.Equal(t, []string{"observe"}, w.h.calls)
	require.Empty(t, w.get(t).Status.State)
}

func TestRetryIsReturnedAfterTheStatusIsWritten(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.h.result = skeleton.Result{Retry: errors.New("gardener overloaded"), RequeueAfter: time.Hour}
	_, err := w.reconcile(t)
	require.ErrorContains(t, err, "gardener overloaded")
	require.NotEmpty(t, w.get(t).Status.State)
}

func TestConsumedAnnotationsAreClearedAndOthersKept(t *testing.T) {
	w := newWorld(t, cluster(map[string]string{"force": "true", "keep": "me"}))
	w.h.result = skeleton.Result{ClearAnnotations: []string{"force", "absent"}}
	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"keep": "me"}, w.get(t).Annotations)
}

func TestFinalizeKeepsTheObjectUntilReleased(t *testing.T) {
	gc := cluster(nil)
	gc.Finalizers = []string{finalizer, "someone.else/finalizer"}
	now := metav1.Now()
	gc.DeletionTimestamp = &now
	w := newWorld(t, gc)
	w.h.finalizeErr = errors.New("secret not deleted")

	_, err := w.reconcile(t)
	require.ErrorContains(t, err, "secret not deleted")
	got := w.get(t)
	require.Equal(t, imv1.GardenerClusterStateDeleting, got.Status.State, "the progress of a failed finalize is still reported")
	require.Contains(t, got.Finalizers, finalizer)

	w.h.finalizeErr, w.h.finalize = nil, skeleton.Result{Release: true}
	_, err = w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, []string{"someone.else/finalizer"}, w.get(t).Finalizers, "exactly our finalizer is removed")
	require.NotContains(t, strings.Join(w.h.calls, ","), "act")
}

func TestNotFoundGoesToGone(t *testing.T) {
	w := newWorld(t)
	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, 1, w.h.gone)
	require.Empty(t, w.h.calls)
}

func TestRebaseMakesTheLiveObjectTheBaseline(t *testing.T) {
	w := newWorld(t, cluster(nil))
	var seen *imv1.GardenerCluster
	w.r.Hooks = rebasing{hooks: w.h, seen: &seen}
	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.NotNil(t, seen)
	require.Equal(t, "live", seen.Annotations["read"])
}

// rebasing rebases in Act and records what it saw.
type rebasing struct {
	*hooks
	seen **imv1.GardenerCluster
}

func (r rebasing) Act(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster], q string, now time.Time) (string, error) {
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"read":"live"}}}`))
	if err := r.c.Patch(ctx, s.Obj.DeepCopy(), patch); err != nil {
		return "", err
	}
	if ok, err := s.Rebase(ctx); err != nil || !ok {
		return "", errors.Join(err, errors.New("gone"))
	}
	*r.seen = s.Obj
	return r.hooks.Act(ctx, s, q, now)
}

// actions records the action of each event.
type actions []string

func (a *actions) Eventf(_, _ runtime.Object, _, _, action, _ string, _ ...any) {
	*a = append(*a, action)
}

func TestEventsAreRecordedWithTheirActionOrElseTheirReason(t *testing.T) {
	w := newWorld(t, cluster(nil))
	var recorded actions
	w.r.Recorder = &recorded
	w.h.result = skeleton.Result{Events: []skeleton.Event{{Reason: "SecretDeleted", Action: "DeleteSecret"}, {Reason: "ShootApplied"}}}

	_, err := w.reconcile(t)

	require.NoError(t, err)
	require.Equal(t, actions{"DeleteSecret", "ShootApplied"}, recorded)
}
