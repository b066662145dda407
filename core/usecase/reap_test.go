package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
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

func (w *reaperWorld) marked(t *testing.T, name string) shootstate.Shoot {
	t.Helper()
	ctx := context.Background()
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: name}, RuntimeID: "rt-" + name}); err != nil {
		t.Fatal(err)
	}
	doc := fake.RestoreDocument{Name: "rt-" + name, Namespace: modelNamespace, Shoot: name}.Encode()
	s, err := w.garden.MarkForDeletion(ctx, name, ports.DeletionMark{RestoreSpec: doc, Record: shootstate.PendingDeletion{
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
	if _, err := w.garden.MarkForDeletion(ctx, "c-1", ports.DeletionMark{RestoreSpec: forged, Record: shootstate.PendingDeletion{
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

func TestReaperKeepsAShootWhoseRecordIsNotBackedByTheKCP(t *testing.T) {
	w := newReaperWorld(t, 10)
	ctx := context.Background()
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-live"}, RuntimeID: "rt-live"}); err != nil {
		t.Fatal(err)
	}
	// Someone who can write shoots writes a record consistent in itself: window 0, marked a week ago.
	week := reapStart.Add(-7 * 24 * time.Hour)
	w.garden.ForgeRecord("c-live", shootstate.PendingDeletion{RuntimeID: "rt-gone", RuntimeNamespace: modelNamespace, MarkedAt: week, DueAt: week})
	for range 2 {
		res, err := w.reaper.Reap(ctx, "c-live", w.clock.Now())
		if err != nil || res.Deleted || res.Decision.Step != deletion.StepUnbacked || res.Decision.RequeueAfter != deletion.UnbackedRecheck {
			t.Fatalf("forged record: %+v, %v; want kept, looked at again later", res.Decision, err)
		}
		if len(res.Events) != 1 || res.Events[0].Reason != usecase.EventNoKCPRecord || !res.Events[0].Warning {
			t.Errorf("events %+v, want one warning %s", res.Events, usecase.EventNoKCPRecord)
		}
		w.clock.Step(30 * 24 * time.Hour)
	}
	// The KCP holds the record of another shoot of the runtime the forged record names: still kept.
	if err := w.records.Put(ctx, deletion.KCPRecord{RuntimeID: "rt-gone", RuntimeNamespace: modelNamespace, ShootName: "c-live",
		ShootUID: "uid-of-an-old-shoot", MarkedAt: week, DueAt: week}); err != nil {
		t.Fatal(err)
	}
	res, err := w.reaper.Reap(ctx, "c-live", w.clock.Now())
	if err != nil || res.Deleted || res.Decision.Reason != deletion.ReasonKCPRecordMismatch {
		t.Fatalf("record of another shoot UID: %+v, %v; want kept (%s)", res.Decision, err, deletion.ReasonKCPRecordMismatch)
	}
	if d := w.garden.Deletions(); len(d) != 0 {
		t.Errorf("deletions %+v, want none", d)
	}
}

func TestReaperRemovesTheKCPRecordOfAGoneShoot(t *testing.T) {
	w := newReaperWorld(t, 10)
	ctx := context.Background()
	w.marked(t, "c-1")
	w.clock.Step(time.Hour)
	if res, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil || !res.Deleted {
		t.Fatalf("due: %+v, %v", res.Decision, err)
	}
	if _, found, _ := w.records.Get(ctx, modelNamespace, "c-1", ports.ReadLive); !found {
		t.Fatal("the record went before the shoot")
	}
	w.garden.FinishDeletion("c-1")
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := w.records.Get(ctx, modelNamespace, "c-1", ports.ReadLive); found {
		t.Error("the record of a shoot that is gone is kept")
	}
}

func TestMigrateRecordsRunsOnceAndNeverBringsADeletionForward(t *testing.T) {
	w := newReaperWorld(t, 10)
	ctx := context.Background()
	// A shoot marked by an operator version without KCP records: due in one hour by its own record.
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-old"}, RuntimeID: "rt-old", Plan: "aws"}); err != nil {
		t.Fatal(err)
	}
	old, err := w.garden.MarkForDeletion(ctx, "c-old", ports.DeletionMark{Record: shootstate.PendingDeletion{RuntimeID: "rt-old",
		RuntimeNamespace: modelNamespace, Plan: "aws", MarkedAt: reapStart.Add(-71 * time.Hour), DueAt: reapStart.Add(time.Hour), Window: 72 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := w.reaper.Reap(ctx, "c-old", w.clock.Now().Add(2*time.Hour)); res.Deleted || res.Decision.Step != deletion.StepUnbacked {
		t.Fatalf("before the migration: %+v; want kept", res.Decision)
	}
	n, err := w.reaper.MigrateRecords(ctx, w.garden, w.clock.Now())
	if err != nil || n != 1 {
		t.Fatalf("migration: %d, %v; want one record", n, err)
	}
	rec, found, _ := w.records.Get(ctx, modelNamespace, "c-old", ports.ReadLive)
	if !found || rec.ShootUID != old.UID || rec.DueAt.Before(reapStart.Add(72*time.Hour)) {
		t.Fatalf("migrated record %+v (found %v); want the shoot's UID, due a full window from now", rec, found)
	}
	// A record written on a shoot after the migration is never migrated.
	if _, err := w.garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-new"}, RuntimeID: "rt-new"}); err != nil {
		t.Fatal(err)
	}
	week := reapStart.Add(-7 * 24 * time.Hour)
	w.garden.ForgeRecord("c-new", shootstate.PendingDeletion{RuntimeID: "rt-new", RuntimeNamespace: modelNamespace, MarkedAt: week, DueAt: week})
	if n, err := w.reaper.MigrateRecords(ctx, w.garden, w.clock.Now()); err != nil || n != 0 {
		t.Fatalf("second migration: %d, %v; want nothing", n, err)
	}
	if _, found, _ := w.records.Get(ctx, modelNamespace, "c-new", ports.ReadLive); found {
		t.Error("a record forged after the migration was migrated")
	}
	w.clock.Step(73 * time.Hour)
	if res, err := w.reaper.Reap(ctx, "c-old", w.clock.Now()); err != nil || !res.Deleted {
		t.Errorf("the migrated shoot after its window: %+v, %v; want deleted", res.Decision, err)
	}
}

func TestTeardownRecordsTheDeletionInTheKCPBeforeReleasing(t *testing.T) {
	clock := fake.NewClock(reapStart)
	garden, records := fake.NewGarden(clock), fake.NewDeletionRecords()
	ctx := context.Background()
	s, err := garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-1"}, RuntimeID: "rt-1", Plan: "aws"})
	if err != nil {
		t.Fatal(err)
	}
	garden.Succeed("c-1")
	td := &usecase.Teardown{Shoots: garden, Access: fake.NewAccessObjects(), Records: records, Policy: modelPolicy()}
	req := usecase.TeardownRequest{RuntimeID: "rt-1", Namespace: modelNamespace, ShootName: "c-1", Plan: "aws", EverReady: true}
	records.Err = func(method string) error { return ports.ErrTransient }
	if res, err := td.Run(ctx, req, clock.Now()); err == nil || res.Release {
		t.Fatalf("with the KCP record failing: %+v, %v; want the Runtime kept", res, err)
	}
	// The KCP's record comes first: the reaper acts on the mark's event and must find it then.
	if got, _ := garden.Get(ctx, "c-1", ports.ReadLive); got.Marks.PendingDeletion != nil {
		t.Errorf("the shoot was marked before the deletion was recorded in the KCP: %+v", *got.Marks.PendingDeletion)
	}
	records.Err = nil
	res, err := td.Run(ctx, req, clock.Now())
	if err != nil || !res.Release {
		t.Fatalf("teardown: %+v, %v", res, err)
	}
	rec, found, _ := records.Get(ctx, modelNamespace, "c-1", ports.ReadLive)
	want := deletion.KCPRecord{RuntimeID: "rt-1", RuntimeNamespace: modelNamespace, ShootName: "c-1", ShootUID: s.UID,
		MarkedAt: reapStart, DueAt: reapStart.Add(72 * time.Hour)}
	if !found || rec != want {
		t.Errorf("KCP record %+v (found %v), want %+v", rec, found, want)
	}
}

// A cache that still shows the old record of a cluster taken back meanwhile must not delete it: the reaper decides
// again on a live read and deletes with the live object's UID and resourceVersion as preconditions. (The KCP's
// record of the earlier deletion still matches the shoot: only the live read protects it.)
func TestReaperDecidesOnTheLiveShootNotTheCache(t *testing.T) {
	w := newReaperWorld(t, 10)
	ctx := context.Background()
	s := w.marked(t, "c-1")
	w.garden.LagCache(true) // the cache keeps the marked shoot
	if _, err := w.garden.CancelDeletion(ctx, "c-1", "rt-c-1", "", ports.Precondition{UID: s.UID}); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(2 * time.Hour)
	res, err := w.reaper.Reap(ctx, "c-1", w.clock.Now())
	if err != nil || res.Deleted || len(w.garden.Deletions()) != 0 {
		t.Fatalf("a cluster taken back, seen marked and due in the cache: %+v, %v, deletions %+v; want kept", res.Decision, err,
			w.garden.Deletions())
	}
}
