package skeleton_test

import (
	"context"
	"errors"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kyma-project/kim/adapters/fake"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

const finalizer = "test.kyma-project.io/finalizer"

// hooks is a controller whose "use case" echoes the shoot name into the status; each hook records that it ran.
type hooks struct {
	calls       []string
	actErr      error
	statusErr   error // the error Status received
	result      skeleton.Result
	finalize    skeleton.Result
	finalizeErr error
	gone        int
	sawFinal    bool // the finalizer was in the API server when Observe ran
	c           client.Client
}

func (h *hooks) Observe(s *skeleton.State[*imv1.GardenerCluster]) string {
	h.calls = append(h.calls, "observe")
	return s.Obj.Spec.Shoot.Name
}

func (h *hooks) Act(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster], q string, now time.Time) (string, error) {
	h.calls = append(h.calls, "act")
	var live imv1.GardenerCluster
	if err := h.c.Get(ctx, s.Key(), &live); err == nil {
		h.sawFinal = slices.Contains(live.Finalizers, finalizer)
	}
	if h.actErr != nil {
		return "failed", h.actErr
	}
	return q + "@" + now.Format(time.RFC3339), nil
}

func (h *hooks) Status(_ context.Context, s *skeleton.State[*imv1.GardenerCluster], r string, err error, _ time.Time) skeleton.Result {
	h.calls = append(h.calls, "status")
	h.statusErr = err
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
	require.NoError(t, w.h.statusErr)
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

// A status write takes only the metadata of the API server's answer: the whole object was decoded on every write
// for nothing but its resourceVersion (a Runtime's JSON, at fleet size a quarter of a millisecond per write).
func TestStatusWriteTakesOnlyTheMetadataOfTheAnswer(t *testing.T) {
	w := newWorld(t, cluster(nil))
	var sent []client.Object
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			sent = append(sent, obj)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}})

	_, err := w.reconcile(t)

	require.NoError(t, err)
	require.Len(t, sent, 1, "one status write")
	written, ok := sent[0].(*metav1.PartialObjectMetadata)
	require.True(t, ok, "the status was written with a %T, whose whole answer is decoded", sent[0])
	gc := w.get(t)
	require.Equal(t, gc.ResourceVersion, written.ResourceVersion, "the answer's metadata is the written version")
	require.Equal(t, imv1.GardenerClusterState("c-1@2026-01-02T03:04:05Z"), gc.Status.State, "the status patch was not applied")
	require.Contains(t, gc.Finalizers, finalizer)
}

func TestStatusReceivesActsErrorAndWritesWhatItMeans(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.h.actErr = errors.New("cannot read the shoot")
	w.h.result = skeleton.Result{Events: []skeleton.Event{{Warning: true, Reason: "Failed", Message: "cannot read the shoot"}}}

	_, err := w.reconcile(t)

	require.Equal(t, []string{"observe", "act", "status"}, w.h.calls)
	require.Same(t, w.h.actErr, w.h.statusErr, "Status gets the error Act returned")
	require.ErrorIs(t, err, w.h.actErr, "Status set no Retry: the skeleton retries with Act's error")
	require.Equal(t, imv1.GardenerClusterState("failed"), w.get(t).Status.State, "what Status wrote of the failure is patched")
	require.Equal(t, "Warning Failed cannot read the shoot", <-w.recorder.Events)
}

func TestStatusMayWrapActsErrorIntoRetry(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.h.actErr = errors.New("boom")
	w.h.result = skeleton.Result{Retry: fmt.Errorf("sync of rid: %w", w.h.actErr)}

	_, err := w.reconcile(t)

	require.EqualError(t, err, "sync of rid: boom", "Act's error is returned once, as Status wrapped it")
}

func TestStatusThatWritesNothingOfActsErrorPatchesNothing(t *testing.T) {
	w := newWorld(t, cluster(nil))
	_, err := w.reconcile(t)
	require.NoError(t, err)
	before := w.get(t)
	w.r.Hooks = ignoringErrors{w.h}
	w.h.actErr = errors.New("gardener unreachable")
	w.clock.Step(time.Second)

	_, err = w.reconcile(t)

	require.ErrorIs(t, err, w.h.actErr)
	require.Equal(t, before.ResourceVersion, w.get(t).ResourceVersion, "the status of a failed Act was written")
}

// ignoringErrors writes no status when Act failed (the GardenerCluster and Runtime controllers do so).
type ignoringErrors struct{ *hooks }

func (i ignoringErrors) Status(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster], r string, err error, now time.Time) skeleton.Result {
	if err != nil {
		return skeleton.Result{}
	}
	return i.hooks.Status(ctx, s, r, err, now)
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

// plain are hooks without Finalize.
type plain struct{ h *hooks }

func (p plain) Observe(s *skeleton.State[*imv1.GardenerCluster]) string { return p.h.Observe(s) }

func (p plain) Act(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster], q string, now time.Time) (string, error) {
	return p.h.Act(ctx, s, q, now)
}

func (p plain) Status(ctx context.Context, s *skeleton.State[*imv1.GardenerCluster], r string, err error, now time.Time) skeleton.Result {
	return p.h.Status(ctx, s, r, err, now)
}

func TestNewReconcilerRefusesAFinalizerWithoutFinalize(t *testing.T) {
	w := newWorld(t)

	_, err := skeleton.NewReconciler(skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: w.c, Live: w.c, Clock: w.clock,
		Finalizer: finalizer, New: w.r.New, Hooks: plain{w.h}})
	require.ErrorContains(t, err, "no Finalize")

	r, err := skeleton.NewReconciler(skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: w.c, Live: w.c, Clock: w.clock,
		Finalizer: finalizer, New: w.r.New, Hooks: w.h})
	require.NoError(t, err)
	require.Equal(t, finalizer, r.Finalizer)

	r, err = skeleton.NewReconciler(skeleton.Reconciler[*imv1.GardenerCluster, string, string]{Client: w.c, Live: w.c, Clock: w.clock,
		New: w.r.New, Hooks: plain{w.h}})
	require.NoError(t, err, "hooks without a finalizer need no Finalize")
	require.NotNil(t, r)
}

func deleting(finalizers ...string) *imv1.GardenerCluster {
	gc := cluster(nil)
	gc.Finalizers = finalizers
	now := metav1.Now()
	gc.DeletionTimestamp = &now
	return gc
}

func TestWithoutFinalizerObjectsBeingDeletedGoThroughAct(t *testing.T) {
	w := newWorld(t, deleting("someone.else/finalizer"))
	w.r.Finalizer, w.r.Hooks = "", plain{w.h}

	_, err := w.reconcile(t)

	require.NoError(t, err)
	require.Equal(t, []string{"observe", "act", "status"}, w.h.calls)
	require.Equal(t, []string{"someone.else/finalizer"}, w.get(t).Finalizers)
}

func TestAReconcilerWithoutFinalizeKeepsTheObjectAndFails(t *testing.T) {
	w := newWorld(t, deleting(finalizer))
	w.r.Hooks = plain{w.h} // built without NewReconciler

	_, err := w.reconcile(t)

	require.ErrorContains(t, err, "no Finalize")
	require.Empty(t, w.h.calls)
	require.Equal(t, []string{finalizer}, w.get(t).Finalizers)
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
