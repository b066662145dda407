package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// reaperWorld is one garden with a shoot of runtime rt-1 marked for deletion at start with a one-hour window.
type reaperWorld struct {
	clock    *fake.Clock
	garden   *fake.Garden
	runtimes *fake.Runtimes
	guard    *fake.DeletionGuard
	records  *fake.DeletionRecords
	server   *fake.ServerClock
	reaper   *usecase.Reaper
}

var reapStart = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func newReaperWorld(t *testing.T, budget int) *reaperWorld {
	t.Helper()
	clock := fake.NewClock(reapStart)
	w := &reaperWorld{clock: clock, garden: fake.NewGarden(clock), runtimes: fake.NewRuntimes(), guard: &fake.DeletionGuard{},
		records: fake.NewDeletionRecords(), server: &fake.ServerClock{Clock: clock}}
	policy := modelPolicy()
	policy.Budget.Limit = budget
	restorer := &usecase.Restorer{Shoots: w.garden, Runtimes: w.runtimes, Policy: policy, DefaultNamespace: modelNamespace}
	w.reaper = &usecase.Reaper{Shoots: w.garden, Runtimes: w.runtimes, Records: w.records, Namespace: modelNamespace, Guard: w.guard,
		Clock: w.server, Restorer: restorer, Policy: policy}
	return w
}

func (w *reaperWorld) marked(t *testing.T, name string) cluster.Shoot {
	t.Helper()
	ctx := context.Background()
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: name}, RuntimeID: "rt-" + name}); err != nil {
		t.Fatal(err)
	}
	doc := fake.RestoreDocument{Name: "rt-" + name, Namespace: modelNamespace, Shoot: name}.Encode()
	s, err := w.garden.MarkForDeletion(ctx, name, ports.DeletionMark{RestoreSpec: doc, Record: cluster.PendingDeletion{
		RuntimeID: "rt-" + name, RuntimeNamespace: modelNamespace, MarkedAt: reapStart, DueAt: reapStart.Add(time.Hour), Window: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	// The Teardown records the deletion in the KCP too when it lets the Runtime go.
	if err := w.records.Put(ctx, deletion.KCPRecord{RuntimeID: "rt-" + name, RuntimeNamespace: modelNamespace, ShootName: name,
		ShootUID: s.UID, MarkedAt: reapStart, DueAt: reapStart.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReaperWaitsThenDeletesOnALiveConfirmedShoot(t *testing.T) {
	w := newReaperWorld(t, 10)
	w.marked(t, "c-1")
	w.garden.LagCache(true) // everything the reaper decides on is confirmed live
	res, err := w.reaper.Reap(context.Background(), "c-1", w.clock.Now())
	if err != nil || res.Deleted || res.Decision.Step != deletion.StepWaitWindow || res.Decision.RequeueAfter != time.Hour {
		t.Fatalf("inside the window: %+v, %v; want to wait an hour", res.Decision, err)
	}
	calls := w.garden.Calls()
	w.clock.Step(time.Hour)
	res, err = w.reaper.Reap(context.Background(), "c-1", w.clock.Now())
	if err != nil || !res.Deleted {
		t.Fatalf("after the window: %+v, %v; want deleted", res.Decision, err)
	}
	if got := w.garden.Calls()["Get"] - calls["Get"]; got < 2 {
		t.Errorf("the deletion was decided on %d reads; want a cached and a live one", got)
	}
	if d := w.garden.Deletions(); len(d) != 1 {
		t.Errorf("deletions %+v, want one", d)
	}
	if st, _ := w.guard.Load(context.Background(), ports.ReadLive); len(st.Ledger.Deletions) != 1 {
		t.Errorf("the deletion is not in the breaker's ledger: %+v", st.Ledger)
	}
}

func TestReaperNeverDeletesWhileTheRuntimeExists(t *testing.T) {
	w := newReaperWorld(t, 10)
	w.marked(t, "c-1")
	w.runtimes.Put(fake.RestoreDocument{Name: "rt-c-1", Namespace: modelNamespace, Shoot: "c-1"})
	w.clock.Step(2 * time.Hour)
	res, err := w.reaper.Reap(context.Background(), "c-1", w.clock.Now())
	if err != nil || res.Deleted || res.Decision.Step != deletion.StepRuntimeExists || res.Decision.RequeueAfter == 0 {
		t.Fatalf("%+v, %v; want kept and looked at again", res.Decision, err)
	}
}

func TestReaperBreakerTripsAndStays(t *testing.T) {
	w := newReaperWorld(t, 2)
	for _, n := range []string{"c-1", "c-2", "c-3"} {
		w.marked(t, n)
	}
	w.clock.Step(2 * time.Hour)
	var deleted, tripped int
	for _, n := range []string{"c-1", "c-2", "c-3"} {
		res, err := w.reaper.Reap(context.Background(), n, w.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted {
			deleted++
		}
		for _, e := range res.Events {
			if e.Reason == usecase.EventBreakerTripped {
				tripped++
			}
		}
	}
	if deleted != 2 || tripped != 1 || !w.guard.Tripped() {
		t.Fatalf("deleted %d, trip events %d, tripped %v; want 2, 1, true", deleted, tripped, w.guard.Tripped())
	}
	w.clock.Step(3 * time.Hour) // the period passes, the breaker stays tripped until a person resets it
	if res, _ := w.reaper.Reap(context.Background(), "c-3", w.clock.Now()); res.Deleted || res.Decision.Stop != deletion.StopBreaker {
		t.Fatalf("after the period: %+v; want still stopped by the breaker", res.Decision)
	}
	w.guard.ResetBreaker()
	if res, _ := w.reaper.Reap(context.Background(), "c-3", w.clock.Now()); !res.Deleted {
		t.Fatalf("after a reset: %+v; want deleted", res.Decision)
	}
}

func TestReaperStopsWhenTheClockRunsAhead(t *testing.T) {
	w := newReaperWorld(t, 10)
	w.marked(t, "c-1")
	w.server.SetOffset(-time.Hour) // the API server's time is an hour behind ours: our due time is not real yet
	w.clock.Step(90 * time.Minute)
	res, err := w.reaper.Reap(context.Background(), "c-1", w.clock.Now())
	if err != nil || res.Deleted || res.Decision.Stop != deletion.StopClockAhead {
		t.Fatalf("%+v, %v; want stopped by the clock check", res.Decision, err)
	}
	w.server.Err = errors.New("no Date header")
	if res, _ := w.reaper.Reap(context.Background(), "c-1", w.clock.Now()); res.Deleted || res.Decision.Stop != deletion.StopClockUnsure {
		t.Fatalf("%+v; want stopped while the server's time is unknown", res.Decision)
	}
}

func TestReaperRestoresOnRequest(t *testing.T) {
	w := newReaperWorld(t, 10)
	w.marked(t, "c-1")
	if err := w.garden.RequestRestore(context.Background(), "c-1"); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(2 * time.Hour) // after the window: the request still wins, within the privacy cap
	res, err := w.reaper.Reap(context.Background(), "c-1", w.clock.Now())
	if err != nil || !res.Restored || res.Deleted {
		t.Fatalf("%+v, %v; want restored", res.Decision, err)
	}
	if rt, ok := w.runtimes.Get("rt-c-1"); !ok || !rt.Restored || rt.Shoot != "c-1" {
		t.Errorf("restored runtime %+v", rt)
	}
}

func TestRestoreRefusesADocumentOfAnotherRuntime(t *testing.T) {
	w := newReaperWorld(t, 10)
	ctx := context.Background()
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-1"}, RuntimeID: "rt-c-1"}); err != nil {
		t.Fatal(err)
	}
	forged := fake.RestoreDocument{Name: "rt-other", Namespace: modelNamespace, Shoot: "c-1"}.Encode()
	if _, err := w.garden.MarkForDeletion(ctx, "c-1", ports.DeletionMark{RestoreSpec: forged, Record: cluster.PendingDeletion{
		RuntimeID: "rt-c-1", RuntimeNamespace: modelNamespace, MarkedAt: reapStart, DueAt: reapStart.Add(time.Hour), Window: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	_, err := w.reaper.Restorer.Restore(ctx, "c-1", w.clock.Now(), false)
	if !errors.Is(err, ports.ErrInvalidRestoreDocument) {
		t.Fatalf("restore of a document naming another runtime: %v, want ErrInvalidRestoreDocument", err)
	}
	if len(w.runtimes.List()) != 0 {
		t.Errorf("a Runtime was created: %+v", w.runtimes.List())
	}
	if s, _ := w.garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.PendingDeletion.RestoreRequested {
		t.Error("the shoot was marked for restore although the document is refused (validated before anything is written)")
	}
}

// Every event of a shoot being provisioned reaches the reaper; only a shoot with a deletion record may cost a read
// of the guard (a live one in KCP while no guard ConfigMap exists). A failing guard shows which shoots read it.
func TestReaperReadsTheGuardOnlyForShootsWithADeletionRecord(t *testing.T) {
	w := newReaperWorld(t, 10)
	if _, err := w.garden.Apply(context.Background(), ports.ShootApply{Spec: shoot.Spec{Name: "c-new"}, RuntimeID: "rt-new"}); err != nil {
		t.Fatal(err)
	}
	w.marked(t, "c-1")
	w.guard.Err = func(method string) error { return errors.New("guard read") }
	res, err := w.reaper.Reap(context.Background(), "c-new", w.clock.Now())
	if err != nil || res.Decision.Step != deletion.StepIgnore {
		t.Errorf("shoot without a deletion record: %+v, %v; want ignored without reading the guard", res.Decision, err)
	}
	if _, err := w.reaper.Reap(context.Background(), "c-1", w.clock.Now()); err == nil {
		t.Error("shoot with a deletion record was decided without reading the guard")
	}
}
