package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// TestNotReadyOnAnExpiredKubeconfig: Ready promises KEB a usable kubeconfig; an expired one is no kubeconfig.
func TestNotReadyOnAnExpiredKubeconfig(t *testing.T) {
	clock := fake.NewClock(reapStart)
	garden, access := fake.NewGarden(clock), fake.NewAccessObjects()
	p := &usecase.Provisioner{Shoots: garden, Seeds: garden, Access: access, Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy()}
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	pass := func() lifecycle.Decision {
		t.Helper()
		res, err := p.Provision(context.Background(), req, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		req.Configured = res.Configured
		return res.Decision
	}
	pass()
	garden.Succeed("c-1")
	access.SetKubeconfigExpiring(modelNamespace, "rt-1", clock.Now().Add(time.Hour))
	if d := pass(); d.State != lifecycle.StateReady {
		t.Fatalf("with a valid kubeconfig: %s %s (%s)", d.State, d.Reason, d.Message)
	}
	clock.Step(2 * time.Hour)
	if d := pass(); d.State == lifecycle.StateReady || d.Reason != lifecycle.ReasonWaitingForKubeconfig {
		t.Fatalf("with an expired kubeconfig: %s %s; want not Ready, %s", d.State, d.Reason, lifecycle.ReasonWaitingForKubeconfig)
	}
}

// newTestProvisioner is a provisioner on the fakes, with the model's configuration and policy.
func newTestProvisioner(clock *fake.Clock) (*usecase.Provisioner, *fake.Garden) {
	garden := fake.NewGarden(clock)
	return &usecase.Provisioner{Shoots: garden, Seeds: garden, Access: fake.NewAccessObjects(),
		Configurator: fake.NewRuntimeConfigurator(), Guard: &fake.DeletionGuard{}, Config: modelConfig(),
		Policy: modelPolicy()}, garden
}

// TestTakingBackKeepsTheLongerPlan: a runtime deleted as azure (24 h) and re-created under its ID as aws (72 h)
// takes its cluster back; a relabel to azure right after (before any other pass) must not shorten the window the
// cluster had when it was taken back. Found by the safety property test (seed 7250637, 1,000,000 sequences).
func TestTakingBackKeepsTheLongerPlan(t *testing.T) {
	ctx := context.Background()
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "azure", generation: 1}
	if _, err := garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-1"}, RuntimeID: "rt-1", Plan: "azure"}); err != nil {
		t.Fatal(err)
	}
	if _, err := garden.MarkForDeletion(ctx, "c-1", ports.DeletionMark{Record: shootstate.PendingDeletion{RuntimeID: "rt-1",
		Plan: "azure", RuntimeNamespace: modelNamespace, MarkedAt: reapStart, DueAt: reapStart.Add(24 * time.Hour),
		Window: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	res, err := p.Provision(ctx, req, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := garden.Get(ctx, "c-1", ports.ReadLive)
	if s.Marks.PendingDeletion != nil || !s.OwnedBy("rt-1") {
		t.Fatalf("not taken back: %+v (decision %s %s)", s.Marks, res.Decision.State, res.Decision.Reason)
	}
	if s.Marks.Plan != "aws" {
		t.Errorf("plan recorded on take-back = %q, want aws (the longer of the record's azure and the runtime's aws)", s.Marks.Plan)
	}
}

// TestAStaleViewIsNoFailure: a shoot the cache has not seen yet makes the create conflict; nothing is reported from
// that stale view (KEB treats Failed as the end of provisioning, and a Ready runtime must not show a failure), and once the view is fresh the shoot of the same
// runtime waiting for deletion is taken back.
func TestAStaleViewIsNoFailure(t *testing.T) {
	ctx := context.Background()
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	garden.LagCache(true)
	if _, err := garden.Apply(ctx, ports.ShootApply{Spec: shoot.Spec{Name: "c-1"}, RuntimeID: "rt-1", Plan: "aws"}); err != nil {
		t.Fatal(err)
	}
	if _, err := garden.MarkForDeletion(ctx, "c-1", ports.DeletionMark{Record: shootstate.PendingDeletion{RuntimeID: "rt-1",
		Plan: "aws", RuntimeNamespace: modelNamespace, MarkedAt: reapStart, DueAt: reapStart.Add(72 * time.Hour),
		Window: 72 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	res, err := p.Provision(ctx, req, clock.Now())
	if !errors.Is(err, ports.ErrConflict) {
		t.Fatalf("stale view: error %v, decision %s %s: %s; want a conflict (nothing decided, nothing reported, retried with backoff)",
			err, res.Decision.State, res.Decision.Reason, res.Decision.Message)
	}
	garden.SyncCache()
	if _, err := p.Provision(ctx, req, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if s, _ := garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.PendingDeletion != nil || !s.OwnedBy("rt-1") {
		t.Errorf("after a fresh view the cluster is not taken back: %+v", s.Marks)
	}
}

// TestAConflictDuringTheTakeOverKeepsTheRuntimeReady (issue 39 item 0b): the take-over of a running cluster met
// Gardener reconciling the shoot between the observation and the apply. The conflict is no failure to report: a
// Ready runtime reported Pending GardenerUnavailable would show KEB a change at the switch, and every later pass
// would decide from "not Ready" (Pending WaitingForKubeconfig). The pass reports nothing; the retry, on a fresh
// view, goes on Ready.
func TestAConflictDuringTheTakeOverKeepsTheRuntimeReady(t *testing.T) {
	ctx := context.Background()
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	rendered, err := shoot.Generate(rt.spec(), p.Config)
	if err != nil {
		t.Fatal(err)
	}
	garden.PutPredecessorAt(rendered, "rt-1", 1) // rendered as the operator does: the apply writes only its marks
	p.Access.(*fake.AccessObjects).SetKubeconfig(modelNamespace, "rt-1")
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{},
		StateReady: true} // as the previous manager left it
	res, err := p.Provision(ctx, req, clock.Now())
	if err != nil || res.Decision.State != lifecycle.StateReady || res.Decision.Reason != lifecycle.ReasonAdoptingShoot {
		t.Fatalf("adoption pass: %v, %s %s: %s; want Ready %s", err, res.Decision.State, res.Decision.Reason,
			res.Decision.Message, lifecycle.ReasonAdoptingShoot)
	}
	garden.SyncCache()
	garden.LagCache(true)
	garden.Succeed("c-1") // Gardener reconciles the shoot: the cache still holds the adopted version
	res, err = p.Provision(ctx, req, clock.Now())
	if !errors.Is(err, ports.ErrConflict) {
		t.Fatalf("apply from a stale view: error %v, decision %s %s: %s; want a conflict that reports nothing", err,
			res.Decision.State, res.Decision.Reason, res.Decision.Message)
	}
	garden.SyncCache()
	garden.LagCache(false)
	for i := range 2 {
		res, err = p.Provision(ctx, req, clock.Now())
		if err != nil || res.Decision.State != lifecycle.StateReady {
			t.Fatalf("pass %d after the conflict: %v, %s %s: %s; want Ready", i+1, err, res.Decision.State, res.Decision.Reason, res.Decision.Message)
		}
	}
	if s, _ := garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.AppliedSpecHash == "" {
		t.Errorf("the apply was not retried after the conflict: marks %+v", s.Marks)
	}
}

// TestAdoptOnlyHoldsChangesToAnAdoptedShoot: at a switch-over the previous manager's shoot is adopted, and with the
// adopt-only mode the operator's first apply, which would change it, waits for a person: nothing is written. Nothing
// KEB sees changes: a Runtime that reported Ready and whose shoot runs its generation stays Ready through the adoption
// and the review (the hold is in the decision, for a condition). When KEB changes the Runtime while it is held, the
// Runtime says that the change waits (Pending, not Failed: KEB would end the operation). The force-patch annotation
// approves it once; after that the shoot is the operator's and a later change of the Runtime is applied without
// another approval.
func TestAdoptOnlyHoldsChangesToAnAdoptedShoot(t *testing.T) {
	ctx := context.Background()
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	p.AdoptOnly = true
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	garden.PutPredecessorAt(shoot.Spec{Name: "c-1"}, "rt-1", 1)          // rendered differently by the previous manager, at generation 1
	p.Access.(*fake.AccessObjects).SetKubeconfig(modelNamespace, "rt-1") // its GardenerCluster's kubeconfig
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{},
		StateReady: true} // as the previous manager left it
	pass := func() lifecycle.Decision {
		t.Helper()
		res, err := p.Provision(ctx, req, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return res.Decision
	}
	before, _ := garden.Get(ctx, "c-1", ports.ReadLive)
	var d lifecycle.Decision
	for i := range 3 { // adopt, then the held apply; a re-run holds again
		if d = pass(); d.State != lifecycle.StateReady {
			t.Fatalf("pass %d of a running adopted runtime KEB did not change: %s %s: %s; want Ready", i+1, d.State, d.Reason, d.Message)
		}
	}
	if d.AdoptionHold == "" {
		t.Fatalf("held apply of an unchanged Runtime: Ready without the hold: %s", d.Message)
	}
	rt.generation = 2 // KEB changes the Runtime while it is held
	req.Runtime = rt.spec()
	if d = pass(); d.Reason != lifecycle.ReasonAdoptionReviewRequired || d.State != lifecycle.StatePending || d.Transient {
		t.Fatalf("held apply: %s %s (transient %v): %s; want Pending %s", d.State, d.Reason, d.Transient, d.Message, lifecycle.ReasonAdoptionReviewRequired)
	}
	s, _ := garden.Get(ctx, "c-1", ports.ReadLive)
	if !s.OwnedBy("rt-1") || s.Generation != before.Generation || s.Marks.AppliedSpecHash != "" {
		t.Fatalf("while held the shoot was changed: generation %d -> %d, marks %+v", before.Generation, s.Generation, s.Marks)
	}
	req.ForcePatch = true
	res, err := p.Provision(ctx, req, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !res.ClearForcePatch {
		t.Errorf("the approval is not consumed: ClearForcePatch false")
	}
	if s, _ = garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.AppliedSpecHash == "" || s.Generation == before.Generation {
		t.Fatalf("approved apply did not write: generation %d, marks %+v", s.Generation, s.Marks)
	}
	req.ForcePatch = false
	rt.generation = 3
	req.Runtime = rt.spec()
	garden.Succeed("c-1")
	if d = pass(); d.Reason == lifecycle.ReasonAdoptionReviewRequired || d.AdoptionHold != "" {
		t.Fatalf("a shoot taken over is held again: %s", d.Message)
	}
	if s, _ = garden.Get(ctx, "c-1", ports.ReadLive); s.Marks.AppliedRuntimeGeneration != 3 {
		t.Errorf("Runtime generation 3 not applied after the takeover: marks %+v", s.Marks)
	}
}
