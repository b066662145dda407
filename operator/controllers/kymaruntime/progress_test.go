package kymaruntime

import (
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestHoldProgress: only Gardener's progress within the interval is held back; every other change of the status,
// and progress older than the interval, is written.
func TestHoldProgress(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	status := func(state gardencorev1beta1.LastOperationState, progress int32, at time.Time) imv1.RuntimeStatus {
		msg := "Gardener Create " + string(state)
		return imv1.RuntimeStatus{State: imv1.RuntimeStatePending, ObservedGeneration: 1,
			Conditions: []metav1.Condition{{Type: imv1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(lifecycle.ReasonWaitingForGardener),
				Message: fmt.Sprintf("%s (%d%%)", msg, progress), ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)}},
			ShootLastOperation: &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate, State: state,
				Progress: progress, LastUpdateTime: metav1.NewTime(at)}}
	}
	before := status(gardencorev1beta1.LastOperationStateProcessing, 40, t0)
	for _, tc := range []struct {
		name   string
		after  func() imv1.RuntimeStatus
		now    time.Time
		every  time.Duration
		held   bool
		wantIn time.Duration // the requeue when held
	}{
		{"progress only, within the interval", func() imv1.RuntimeStatus {
			return status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
		}, t0.Add(10 * time.Second), time.Minute, true, 50 * time.Second},
		{"progress only, the written progress is older than the interval", func() imv1.RuntimeStatus {
			return status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(70*time.Second))
		}, t0.Add(70 * time.Second), time.Minute, false, 0},
		{"progress only, interval 0 writes every change", func() imv1.RuntimeStatus {
			return status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
		}, t0.Add(10 * time.Second), 0, false, 0},
		{"Gardener's operation state changed", func() imv1.RuntimeStatus {
			return status(gardencorev1beta1.LastOperationStateSucceeded, 100, t0.Add(10*time.Second))
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
		{"a condition's reason changed", func() imv1.RuntimeStatus {
			s := status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
			s.Conditions[0].Reason = string(lifecycle.ReasonGardenerRetryScheduled)
			return s
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
		{"a condition came", func() imv1.RuntimeStatus {
			s := status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: imv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: "GardenerFailed"})
			return s
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
		{"Gardener reported an error", func() imv1.RuntimeStatus {
			s := status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
			s.ShootLastErrors = []gardencorev1beta1.LastError{{Description: "quota"}}
			return s
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
		{"nothing changed (a pass after a restart, within the interval of the last report)", func() imv1.RuntimeStatus {
			return *before.DeepCopy()
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
		{"the configuration record changed", func() imv1.RuntimeStatus {
			s := status(gardencorev1beta1.LastOperationStateProcessing, 60, t0.Add(10*time.Second))
			s.RuntimeConfiguration = &imv1.RuntimeConfigurationStatus{Hash: "h1"}
			return s
		}, t0.Add(10 * time.Second), time.Minute, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := tc.after()
			want := after.DeepCopy()
			due, held := holdProgress(*before.DeepCopy(), &after, tc.every, time.Time{}, tc.now)
			if held != tc.held {
				t.Fatalf("held %v, want %v", held, tc.held)
			}
			if held {
				if !equality.Semantic.DeepEqual(after, before) {
					t.Errorf("held status differs from the written one:\n%+v\n%+v", after, before)
				}
				if due != tc.wantIn {
					t.Errorf("come back in %s, want %s", due, tc.wantIn)
				}
				return
			}
			if !equality.Semantic.DeepEqual(after, *want) {
				t.Errorf("a status that is news was changed:\n%+v\nwant\n%+v", after, *want)
			}
		})
	}
	// Without a written last operation, Gardener's first report, and a message change before it, are progress
	// counted from the Runtime's creation (issue 29): held on a new Runtime, written on one older than the
	// interval, and written at once when it is more than progress.
	noOp := before.DeepCopy()
	noOp.ShootLastOperation = nil
	for _, tc := range []struct {
		name    string
		created time.Time
		state   gardencorev1beta1.LastOperationState
		held    bool
		due     time.Duration
	}{
		{"the first report on a Runtime created 10 s ago", t0.Add(-10 * time.Second), gardencorev1beta1.LastOperationStateProcessing, true, 50 * time.Second},
		{"the first report on a Runtime created 2 m ago", t0.Add(-2 * time.Minute), gardencorev1beta1.LastOperationStateProcessing, false, 0},
		{"the first report on a Runtime of unknown age", time.Time{}, gardencorev1beta1.LastOperationStateProcessing, false, 0},
		{"the first report is a success", t0.Add(-10 * time.Second), gardencorev1beta1.LastOperationStateSucceeded, false, 0},
		{"no report yet, the message names another shoot generation", t0.Add(-10 * time.Second), "", true, 50 * time.Second},
		{"no report yet on a Runtime created 2 m ago", t0.Add(-2 * time.Minute), "", false, 0},
	} {
		first := status(tc.state, 60, t0)
		if tc.state == "" {
			first = *noOp.DeepCopy()
			first.Conditions[0].Message = "Waiting for Gardener to pick up shoot c-1 generation 2."
		}
		due, held := holdProgress(*noOp.DeepCopy(), &first, time.Minute, tc.created, t0)
		if held != tc.held || due != tc.due {
			t.Errorf("%s: held %v, come back in %s; want %v, %s", tc.name, held, due, tc.held, tc.due)
		}
		if held && !equality.Semantic.DeepEqual(first, *noOp) {
			t.Errorf("%s: the held status differs from the written one: %+v", tc.name, first)
		}
	}
}

// TestReconcilerWritesProgressAtMostEveryInterval: while Gardener works, a progress report within the interval
// leaves the Runtime as it is (no status write) and asks to come back; the next pass after the interval writes the
// latest progress, and Gardener finishing is written at once.
func TestReconcilerWritesProgressAtMostEveryInterval(t *testing.T) {
	w := newWorld(t)
	w.r.Hooks.(*hooks).progressEvery = time.Minute
	const shootName = "c-91f0e7a"
	w.reconcile(t)
	w.garden.ProgressTo(shootName, 10)
	rt := w.reconcile(t)
	if op := rt.Status.ShootLastOperation; op == nil || op.Progress != 10 {
		t.Fatalf("the first progress report was not written: %+v", op)
	}
	written := rt.ResourceVersion

	w.clock.Step(20 * time.Second)
	w.garden.ProgressTo(shootName, 30)
	res, err := w.r.Reconcile(t.Context(), w.req)
	if err != nil {
		t.Fatal(err)
	}
	rt = w.reconcile(t)
	if rt.ResourceVersion != written || rt.Status.ShootLastOperation.Progress != 10 {
		t.Errorf("progress 20 s after the last write was written: resourceVersion %s -> %s, progress %d",
			written, rt.ResourceVersion, rt.Status.ShootLastOperation.Progress)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 40*time.Second {
		t.Errorf("a held pass comes back after %s, want within the 40 s left of the interval", res.RequeueAfter)
	}

	w.clock.Step(40 * time.Second)
	if rt = w.reconcile(t); rt.Status.ShootLastOperation.Progress != 30 || rt.ResourceVersion == written {
		t.Fatalf("the progress held was not written after the interval: progress %d", rt.Status.ShootLastOperation.Progress)
	}
	if c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady); c == nil || !strings.Contains(c.Message, "30%") {
		t.Errorf("the Ready message does not quote the progress written: %+v", c)
	}

	w.clock.Step(time.Second)
	w.garden.Succeed(shootName)
	if rt = w.reconcile(t); rt.Status.ShootLastOperation.State != gardencorev1beta1.LastOperationStateSucceeded ||
		readyReason(rt) != string(lifecycle.ReasonWaitingForKubeconfig) {
		t.Fatalf("Gardener finishing was not written at once: %+v, %s", rt.Status.ShootLastOperation, readyReason(rt))
	}
}
