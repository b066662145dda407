package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// Two runtimes of one global account on one binding, both deleted (issue 39 item 1; the safety property test found
// it with seed 1796418851334807813): a shoot that waits for its own deletion is no tenant to give the binding back
// to, so the last deletion keeps the operator's label until its shoot is gone.

// deleteSibling deletes runtime rt-2 (shoot c-2, the sibling) at the world's time.
func (w *bindingWorld) deleteSibling(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	res, err := w.teardown.Run(ctx, usecase.TeardownRequest{RuntimeID: "rt-2", Namespace: modelNamespace, ShootName: "c-2", Plan: "aws",
		EverReady: true, CredentialsBinding: "aws-binding", DeletionStarted: w.clock.Now()}, w.clock.Now())
	if err != nil || !res.Release {
		t.Fatalf("teardown of the sibling: %+v, %v", res, err)
	}
	if done, err := kebFreeBinding(ctx, w.bindings, w.garden, "aws-binding", "c-2"); err != nil || !done {
		t.Fatalf("KEB's step of the sibling: done=%v, %v", done, err)
	}
}

func (w *bindingWorld) recordOf(t *testing.T, shootName string) deletion.KCPRecord {
	t.Helper()
	rec, found, err := w.records.Get(context.Background(), modelNamespace, shootName, ports.ReadLive)
	if err != nil || !found {
		t.Fatalf("no deletion record of %s: %v", shootName, err)
	}
	return rec
}

// TestTheLastOfTwoDeletionsKeepsTheLabel: both runtimes are deleted one after the other. At the end of the holds
// neither deletion gives the binding back (the other shoot waits for deletion too), and when the first shoot is
// gone the label stays for the second, which no other shoot names any more.
func TestTheLastOfTwoDeletionsKeepsTheLabel(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.clock.Step(30 * time.Minute)
	w.deleteSibling(t)
	if got := w.recordOf(t, "c-2").BindingRelease; got != deletion.BindingReleased {
		t.Errorf("the sibling's record says %q; want Released (it relies on the operator's label)", got)
	}
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	w.reap(t, "c-1")
	w.reap(t, "c-2")
	if got := w.labels(t); got["dirty"] != "true" {
		t.Fatalf("binding after both holds: %v; want dirty (only shoots waiting for deletion name it)", got)
	}
	for _, name := range []string{"c-1", "c-2"} {
		if got := w.recordOf(t, name).BindingRelease; got != deletion.BindingKept {
			t.Errorf("record of %s says %q; want Kept", name, got)
		}
	}
	w.reapToTheEnd(t) // c-1's shoot is deleted after its window and gone; c-2 still waits
	if got := w.labels(t); got["dirty"] != "true" {
		t.Errorf("binding after the first shoot is gone: %v; want dirty (the second deletion is its last user)", got)
	}
}

// TestARestoreDuringAnotherDeletionsHoldKeepsTheLabel: the sibling is deleted within the first deletion's hold and
// then taken back. KEB's step of the first deletion may still be about to run, so the label stays; the first
// deletion gives the binding back to the restored sibling at the end of its hold.
func TestARestoreDuringAnotherDeletionsHoldKeepsTheLabel(t *testing.T) {
	w := newBindingWorld(t, map[string]string{"tenantName": "ga-1"})
	w.sibling(t)
	w.delete(t, reapStart)
	w.clock.Step(10 * time.Minute)
	w.deleteSibling(t)
	sibling := &kcpRuntime{id: "rt-2", shoot: "c-2", plan: "aws", generation: 1, everReady: true}
	req := usecase.RuntimeRequest{Runtime: sibling.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	if _, err := w.provision.Provision(context.Background(), req, w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if s, _ := w.garden.Get(context.Background(), "c-2", ports.ReadLive); s.Marks.PendingDeletion != nil {
		t.Fatalf("the sibling was not taken back: %+v", s.Marks)
	}
	if got := w.labels(t); got["dirty"] != "true" {
		t.Fatalf("binding after the sibling's restore: %v; want dirty while the first deletion's hold runs", got)
	}
	w.clock.Step(deletion.DefaultBindingReleaseHold)
	w.reap(t, "c-1")
	if got := w.labels(t); !kebSelectsForTenant(got, "ga-1") {
		t.Errorf("binding after the first hold: %v; want it selected for the tenant again (the restored sibling names it)", got)
	}
}
