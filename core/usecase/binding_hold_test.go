package usecase_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// kebSelectsForTenant tells whether KEB's provisioning of another runtime of global account ga finds the binding
// with labels before it claims a new one: its selector tenantName=<ga>,!dirty (plus shared!=true)
// (KEB:internal/subscriptions/label_selector.go, BuildForTenantMatching).
func kebSelectsForTenant(labels map[string]string, ga string) bool {
	_, dirty := labels["dirty"]
	return labels["tenantName"] == ga && !dirty && labels["shared"] != "true"
}

// sibling adds a second Ready runtime rt-2 of the same global account whose shoot c-2 names the binding of c-1.
func (w *bindingWorld) sibling(t *testing.T) {
	t.Helper()
	w.liveShoot(t, "c-2", "rt-2")
}

// liveShoot creates a Ready shoot of runtime id naming the binding: another cluster of the same global account.
func (w *bindingWorld) liveShoot(t *testing.T, name, id string) {
	t.Helper()
	spec := shoot.Spec{Name: name, CredentialsBinding: "aws-binding"}
	if _, err := w.garden.Apply(context.Background(), ports.ShootApply{Spec: spec, RuntimeID: id, Plan: "aws"}); err != nil {
		t.Fatal(err)
	}
	w.garden.Succeed(name)
}

func (w *bindingWorld) reap(t *testing.T, name string) usecase.ReapResult {
	t.Helper()
	res, err := w.reaper.Reap(context.Background(), name, w.clock.Now())
	if err != nil {
		t.Fatalf("reap %s: %v", name, err)
	}
	return res
}

// TestTheHoldReturnsABindingASiblingNamesToItsTenant (issue 39 item 1): one of two runtimes of a global account
// on one binding is deleted. KEB's step finishes at once and the cluster waits out its window; after the hold the
// operator's dirty label comes off, so KEB's next runtime of that account is put on the same binding again.
func TestTheHoldReturnsABindingASiblingNamesToItsTenant(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1", "hyperscalerType": "aws"})
	w.sibling(t)
	if res := w.delete(t, reapStart); !res.Release {
		t.Fatalf("teardown: %+v", res)
	}
	if done, err := kebFreeBinding(ctx, w.bindings, w.garden, "aws-binding", "c-1"); err != nil || !done {
		t.Fatalf("KEB's step after the Runtime is gone: done=%v, %v; want done at once", done, err)
	}
	hold := deletion.DefaultBindingReleaseHold
	res := w.reap(t, "c-1")
	if kebSelectsForTenant(w.labels(t), "ga-1") {
		t.Fatalf("binding %v selected for the tenant within the hold: KEB's step of this deletion may still be to run", w.labels(t))
	}
	if res.Decision.Step != deletion.StepWaitWindow || res.Decision.RequeueAfter != hold {
		t.Errorf("reaper within the hold: step %s, requeue %s; want %s, back at the end of the hold (%s)", res.Decision.Step,
			res.Decision.RequeueAfter, deletion.StepWaitWindow, hold)
	}
	w.clock.Step(hold - time.Minute)
	w.reap(t, "c-1")
	if w.labels(t)["dirty"] != "true" {
		t.Fatalf("binding %v; want dirty until the hold is over", w.labels(t))
	}
	w.clock.Step(time.Minute)
	res = w.reap(t, "c-1")
	if got := w.labels(t); !kebSelectsForTenant(got, "ga-1") || len(got) != 2 {
		t.Errorf("binding after the hold: %v; want only the dirty label gone (tenantName=ga-1,!dirty selects it)", got)
	}
	if rec := w.record(t); rec.BindingRelease != deletion.BindingReturned {
		t.Errorf("record %+v; want Returned", rec)
	}
	if len(res.Events) != 1 || res.Events[0].Reason != usecase.EventBindingRestored {
		t.Errorf("events %+v; want one %s", res.Events, usecase.EventBindingRestored)
	}
	if s, _ := w.garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.PendingDeletion == nil || !s.HibernationRequested {
		t.Errorf("the deleted runtime's cluster after the hold: %+v; want it hibernated, waiting for its window", s)
	}
	// The cluster's window ends as before; the sibling still names the binding, so it stays the tenant's.
	w.clock.Step(73 * time.Hour)
	if res := w.reap(t, "c-1"); !res.Deleted {
		t.Fatalf("after the window: %+v; want deleted", res.Decision)
	}
	w.garden.FinishDeletion("c-1")
	w.reap(t, "c-1")
	if got := w.labels(t); !kebSelectsForTenant(got, "ga-1") {
		t.Errorf("binding after the shoot is gone: %v; want it left to the tenant (KEB's step leaves it so)", got)
	}
}

// TestTheLastUsersBindingStaysDirtyAfterTheHold: no other shoot names the binding, so the label stays (KEB labels
// a binding no shoot names dirty), and the check is not repeated on every pass.
func TestTheLastUsersBindingStaysDirtyAfterTheHold(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.delete(t, reapStart)
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	w.reap(t, "c-1")
	if got := w.labels(t); got["dirty"] != "true" {
		t.Fatalf("binding of the last user after the hold: %v; want dirty", got)
	}
	if rec := w.record(t); rec.BindingRelease != deletion.BindingKept {
		t.Errorf("record %+v; want Kept", rec)
	}
	lists := 0
	w.bindings.Err = func(method string) error {
		if method == "UsedBy" {
			lists++
		}
		return nil
	}
	w.reap(t, "c-1")
	if lists != 0 {
		t.Errorf("%d live lists of the project's shoots on a later pass; want none (decided at the end of the hold)", lists)
	}
	w.bindings.Err = nil
	w.reapToTheEnd(t)
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding after the shoot is gone: %v; want dirty", got)
	}
}

// TestTheHoldNeverRemovesADirtyLabelSomeoneElseSet: the binding was dirty before the deletion (FoundDirty).
func TestTheHoldNeverRemovesADirtyLabelSomeoneElseSet(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1", "dirty": "true"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.clock.Step(deletion.DefaultBindingReleaseHold + time.Hour)
	w.reap(t, "c-1")
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding %v; want the dirty label the operator did not set kept", got)
	}
}

// TestTheHoldWaitsForASiblingsDeletion: a second runtime of the account is deleted while the first deletion's
// label is on; its teardown finds the binding dirty with the label the operator set for the first, and KEB's step
// of it relies on that label, so it holds the label too (Released): the label stays until that deletion's hold is
// over as well, and that deletion gives the binding back to the live third cluster.
func TestTheHoldWaitsForASiblingsDeletion(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.liveShoot(t, "c-3", "rt-3") // a third, live cluster of the account
	w.delete(t, reapStart)
	w.clock.Step(90 * time.Minute)
	res, err := w.teardown.Run(ctx, usecase.TeardownRequest{RuntimeID: "rt-2", Namespace: modelNamespace, ShootName: "c-2", Plan: "aws",
		EverReady: true, CredentialsBinding: "aws-binding", DeletionStarted: w.clock.Now()}, w.clock.Now())
	if err != nil || !res.Release {
		t.Fatalf("teardown of the sibling: %+v, %v", res, err)
	}
	if done, err := kebFreeBinding(ctx, w.bindings, w.garden, "aws-binding", "c-2"); err != nil || !done {
		t.Fatalf("KEB's step of the sibling: done=%v, %v", done, err)
	}
	w.clock.Step(30 * time.Minute) // the first hold is over, the sibling's runs 90 minutes more
	first := w.reap(t, "c-1")
	if w.labels(t)["dirty"] != "true" {
		t.Fatalf("binding %v; want dirty while the sibling deletion's hold runs", w.labels(t))
	}
	if first.Decision.RequeueAfter != 90*time.Minute {
		t.Errorf("requeue %s; want the end of the sibling's hold (90m)", first.Decision.RequeueAfter)
	}
	rec, _, err := w.records.Get(ctx, modelNamespace, "c-2", ports.ReadLive)
	if err != nil || rec.BindingRelease != deletion.BindingReleased {
		t.Fatalf("the sibling's record %+v (%v); want Released: it holds the operator's label too", rec, err)
	}
	w.clock.Step(90 * time.Minute)
	w.reap(t, "c-2") // the sibling's hold is over: c-3 lives, so the binding goes back to the tenant
	if got := w.labels(t); !kebSelectsForTenant(got, "ga-1") {
		t.Errorf("binding after both holds: %v; want it selected for the tenant again (c-3 names it)", got)
	}
	w.reap(t, "c-1")
	if got := w.record(t); got.BindingRelease != deletion.BindingReturned {
		t.Errorf("first deletion's record %+v; want Returned (the label is gone)", got)
	}
}

// TestTheHoldEndsInTheGardensTime: an operator clock running ahead does not end the hold early.
func TestTheHoldEndsInTheGardensTime(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.reaper.Clock.(*fake.ServerClock).SetOffset(-time.Hour)
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	res := w.reap(t, "c-1")
	if w.labels(t)["dirty"] != "true" {
		t.Fatalf("binding %v; want dirty: the garden's clock says the hold runs an hour more", w.labels(t))
	}
	if res.Decision.RequeueAfter != time.Hour {
		t.Errorf("requeue %s; want the hour the garden's clock still counts", res.Decision.RequeueAfter)
	}
}

// TestAReturnedBindingIsNotTouchedAgain: once the label came off (or someone removed it), a later label on the
// binding is not this deletion's, neither for the hold nor for a restore.
func TestAReturnedBindingIsNotTouchedAgain(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.bindings.SetLabel("aws-binding", "dirty", "") // a person takes it off
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	w.reap(t, "c-1")
	if rec := w.record(t); rec.BindingRelease != deletion.BindingReturned {
		t.Fatalf("record %+v; want Returned", rec)
	}
	w.bindings.SetLabel("aws-binding", "dirty", "true") // someone else labels it later
	w.reap(t, "c-1")
	w.takeBack(t)
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding %v; want the later label someone else set kept", got)
	}
}

// TestTheHoldEndRetriesAFailingRemoval: a failing patch is an error (the reaper retries); the record keeps saying
// Released until the label is off.
func TestTheHoldEndRetriesAFailingRemoval(t *testing.T) {
	ctx := context.Background()
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	w.bindings.Err = func(method string) error {
		if method == "RemoveDirty" {
			return fmt.Errorf("injected: %w", ports.ErrTransient)
		}
		return nil
	}
	if _, err := w.reaper.Reap(ctx, "c-1", w.clock.Now()); err == nil {
		t.Fatal("no error from a failing removal; want one, so the reaper retries")
	}
	if rec := w.record(t); rec.BindingRelease != deletion.BindingReleased {
		t.Errorf("record %+v after a failed removal; want Released", rec)
	}
	w.bindings.Err = nil
	w.reap(t, "c-1")
	if got := w.labels(t); !kebSelectsForTenant(got, "ga-1") {
		t.Errorf("binding %v after the retry; want it selected for the tenant", got)
	}
}
