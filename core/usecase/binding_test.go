package usecase_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// bindingWorld is a runtime whose shoot names a dedicated credentials binding of KEB's pool, with the teardown,
// the restore (the provisioner taking the cluster back) and the reaper wired to the bindings.
type bindingWorld struct {
	clock     *fake.Clock
	garden    *fake.Garden
	records   *fake.DeletionRecords
	bindings  *fake.CredentialsBindings
	teardown  *usecase.Teardown
	provision *usecase.Provisioner
	reaper    *usecase.Reaper
	rt        *kcpRuntime
}

func newBindingWorld(t *testing.T, labels map[string]string) *bindingWorld {
	t.Helper()
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	w := &bindingWorld{clock: clock, garden: garden, records: fake.NewDeletionRecords(), provision: p,
		rt: &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1, everReady: true}}
	w.bindings = fake.NewCredentialsBindings(garden)
	w.bindings.Create("aws-binding", labels)
	policy := modelPolicy()
	p.Bindings, p.Records = w.bindings, w.records
	w.teardown = &usecase.Teardown{Shoots: garden, Access: fake.NewAccessObjects(), Records: w.records, Policy: policy, Bindings: w.bindings}
	runtimes := fake.NewRuntimes()
	w.reaper = &usecase.Reaper{Shoots: garden, Runtimes: runtimes, Records: w.records, Namespace: modelNamespace, Guard: &fake.DeletionGuard{},
		Clock: &fake.ServerClock{Clock: clock}, Restorer: &usecase.Restorer{Shoots: garden, Runtimes: runtimes, Policy: policy},
		Policy: policy, Bindings: w.bindings}
	ctx := context.Background()
	spec := shoot.Spec{Name: "c-1", CredentialsBinding: "aws-binding"}
	if _, err := garden.Apply(ctx, ports.ShootApply{Spec: spec, RuntimeID: "rt-1", Plan: "aws"}); err != nil {
		t.Fatal(err)
	}
	garden.Succeed("c-1")
	return w
}

// deleteAndTakeBack deletes the Runtime (its cluster waits for deletion) and creates it again, which takes the
// cluster back.
func (w *bindingWorld) deleteAndTakeBack(t *testing.T) {
	t.Helper()
	if res := w.delete(t, reapStart); !res.Release {
		t.Fatalf("teardown: %+v", res)
	}
	w.takeBack(t)
}

// takeBack creates the Runtime again with its ID: the provisioner takes the waiting cluster back.
func (w *bindingWorld) takeBack(t *testing.T) {
	t.Helper()
	req := usecase.RuntimeRequest{Runtime: w.rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	if _, err := w.provision.Provision(context.Background(), req, w.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func (w *bindingWorld) delete(t *testing.T, started time.Time) usecase.TeardownResult {
	t.Helper()
	res, err := w.teardown.Run(context.Background(), usecase.TeardownRequest{RuntimeID: "rt-1", Namespace: modelNamespace, ShootName: "c-1",
		Plan: "aws", EverReady: true, CredentialsBinding: "aws-binding", DeletionStarted: started}, w.clock.Now())
	if err != nil && res.Release {
		t.Fatalf("released with an error: %v", err)
	}
	return res
}

// kebFreeBinding is what KEB's Free_Credentials_Binding_Step decides on one run: done (the step ends), or wait
// for the shoot (which fails the deprovisioning after an hour).
func kebFreeBinding(ctx context.Context, b ports.CredentialsBindings, garden ports.ShootReader, binding, shootName string) (bool, error) {
	cb, err := b.Get(ctx, binding)
	if err != nil || !cb.Exists {
		return false, fmt.Errorf("get binding %s: %w", binding, err)
	}
	if cb.Shared || cb.Internal || cb.Dirty {
		return true, nil
	}
	if s, err := garden.Get(ctx, shootName, ports.ReadLive); err != nil || s.Exists {
		return false, err
	}
	if users, err := b.UsedBy(ctx, binding, ""); err != nil || len(users) > 0 {
		return err == nil, err
	}
	return true, b.SetDirty(ctx, binding, cb.ResourceVersion)
}

func (w *bindingWorld) labels(t *testing.T) map[string]string {
	t.Helper()
	return w.bindings.Labels("aws-binding")
}

func (w *bindingWorld) record(t *testing.T) deletion.KCPRecord {
	t.Helper()
	rec, found, err := w.records.Get(context.Background(), modelNamespace, "c-1", ports.ReadLive)
	if err != nil || !found {
		t.Fatalf("no deletion record: %v", err)
	}
	return rec
}

// reapToTheEnd deletes the shoot after its window and lets Gardener finish, then lets the reaper see it gone.
func (w *bindingWorld) reapToTheEnd(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w.clock.Step(73 * time.Hour)
	if res, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil || !res.Deleted {
		t.Fatalf("after the window: %+v, %v; want deleted", res.Decision, err)
	}
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if w.labels(t)["dirty"] != "true" {
		t.Fatalf("the binding of a shoot being deleted lost its dirty label: %v", w.labels(t))
	}
	w.garden.FinishDeletion("c-1")
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatalf("the reaper on the gone shoot: %v", err)
	}
}

func TestKEBDeprovisioningFinishesWhileTheShootWaitsAndTheBindingEndsAsKEBLeavesIt(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1", "hyperscalerType": "aws"})
	if res := w.delete(t, reapStart); !res.Release {
		t.Fatalf("teardown: %+v; want released", res)
	}
	if got := w.labels(t); got["dirty"] != "true" || got["tenantName"] != "ga-1" || len(got) != 3 {
		t.Errorf("binding labels after the release: %v; want dirty=true added and nothing else changed", got)
	}
	if rec := w.record(t); rec.CredentialsBinding != "aws-binding" || rec.BindingRelease != deletion.BindingReleased {
		t.Errorf("deletion record %+v; want the binding recorded as released", rec)
	}
	if done, err := kebFreeBinding(ctx, w.bindings, w.garden, "aws-binding", "c-1"); err != nil || !done {
		t.Fatalf("KEB's step while the shoot waits: done=%v, %v; want done at once", done, err)
	}
	w.reapToTheEnd(t)
	if got := w.labels(t); got["dirty"] != "true" || got["tenantName"] != "ga-1" {
		t.Errorf("binding after the shoot is gone: %v; want dirty=true and tenantName kept, as KEB leaves it for the cleanup job", got)
	}
	if recs, _ := w.records.ForShoot(ctx, "c-1"); len(recs) != 0 {
		t.Errorf("records left after the shoot is gone: %+v", recs)
	}
}

func TestRestoreTakesBackTheDirtyLabelTheTeardownSet(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.deleteAndTakeBack(t)
	if s, _ := w.garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.PendingDeletion != nil {
		t.Fatalf("the cluster was not taken back")
	}
	if got := w.labels(t); got["dirty"] != "" || got["tenantName"] != "ga-1" {
		t.Errorf("binding of the restored cluster: %v; want no dirty label (the cleanup job wipes dirty bindings)", got)
	}
	if recs, _ := w.records.ForShoot(ctx, "c-1"); len(recs) != 0 {
		t.Errorf("records after the restore: %+v; want the taken-back deletion's record withdrawn", recs)
	}
}

// TestATakenBackDeletionsRecordBacksNoLaterRecord: once a deletion is taken back its KCP record is gone, so a
// record someone writes on the shoot afterwards (window 0, marked a week ago, naming the runtime) is unbacked and
// kept, instead of being deleted at the first deletion's long-past due time.
func TestATakenBackDeletionsRecordBacksNoLaterRecord(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.deleteAndTakeBack(t)
	w.clock.Step(80 * time.Hour) // past the first deletion's due time
	at := w.clock.Now().Add(-7 * 24 * time.Hour)
	if !w.garden.ForgeRecord("c-1", shootstate.PendingDeletion{RuntimeID: "rt-1", RuntimeNamespace: modelNamespace, Plan: "trial",
		MarkedAt: at, DueAt: at}) {
		t.Fatal("the record was not written")
	}
	for range 3 {
		res, err := w.reaper.Reap(ctx, "c-1", w.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted {
			t.Fatalf("the shoot was deleted on a record written after its deletion was taken back: %+v", res.Decision)
		}
		if res.Decision.Step != deletion.StepUnbacked {
			t.Errorf("reaper step %s (%s); want %s", res.Decision.Step, res.Decision.Message, deletion.StepUnbacked)
		}
	}
}

func TestADirtyLabelSomeoneElseSetSurvivesTheRestore(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1", "dirty": "true"})
	w.delete(t, reapStart)
	if rec := w.record(t); rec.BindingRelease != deletion.BindingFoundDirty {
		t.Errorf("record %+v; want FoundDirty", rec)
	}
	w.takeBack(t)
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding %v; want the dirty label the operator did not set kept", got)
	}
}

func TestABindingAnotherShootUsesLosesTheOperatorsDirtyLabelAtTheEnd(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t) // another cluster of the same global account
	w.delete(t, reapStart)
	if w.labels(t)["dirty"] != "true" {
		t.Fatalf("binding %v; want dirty while the shoot waits", w.labels(t))
	}
	ctx := context.Background()
	w.clock.Step(73 * time.Hour)
	if res, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil || !res.Deleted {
		t.Fatalf("after the window: %+v, %v", res.Decision, err)
	}
	w.garden.FinishDeletion("c-1")
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := w.labels(t); got["dirty"] != "" || got["tenantName"] != "ga-1" {
		t.Errorf("binding used by another shoot: %v; want it as KEB leaves it (no dirty)", got)
	}
}

func TestSharedAndInternalBindingsAreNeverLabelled(t *testing.T) {
	for _, l := range []string{"shared", "internal"} {
		w := newBindingWorld(t, map[string]string{l: "true"})
		if res := w.delete(t, reapStart); !res.Release {
			t.Fatalf("%s: teardown %+v", l, res)
		}
		w.reapToTheEndWithout(t)
		if got := w.labels(t); got["dirty"] != "" {
			t.Errorf("%s binding got %v", l, got)
		}
	}
}

func (w *bindingWorld) reapToTheEndWithout(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w.clock.Step(73 * time.Hour)
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	w.garden.FinishDeletion("c-1")
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestALabelThatKeepsFailingHoldsTheRuntimeOnlyForTheBound(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.bindings.Err = func(method string) error {
		if method == "SetDirty" {
			return fmt.Errorf("injected: %w", ports.ErrForbidden)
		}
		return nil
	}
	if res := w.delete(t, reapStart); res.Release {
		t.Fatalf("released while the label fails inside the bound: %+v", res)
	}
	w.clock.Step(deletion.BindingReleaseTimeout + time.Second)
	res := w.delete(t, reapStart)
	if !res.Release {
		t.Fatalf("still held after the bound: %+v", res)
	}
	warned := false
	for _, e := range res.Events {
		warned = warned || (e.Warning && e.Reason == usecase.EventBindingNotReleased)
	}
	if !warned {
		t.Errorf("events %+v; want a %s warning", res.Events, usecase.EventBindingNotReleased)
	}
	if rec := w.record(t); rec.BindingRelease != deletion.BindingNotReleased {
		t.Errorf("record %+v; want NotReleased", rec)
	}
	// Once the shoot is gone the binding still ends as KEB leaves it.
	w.bindings.Err = nil
	w.reapToTheEndWithout(t)
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding after the shoot is gone: %v; want dirty=true as KEB leaves a binding no shoot names", got)
	}
}
