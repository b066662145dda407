package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// adoptedHeld is a Ready runtime whose shoot the previous manager created and applied at the Runtime's generation 3
// (its runtime-generation annotation), adopted (managed) but never taken over: no spec hash of this operator, and the
// operator's rendering differs from it.
func adoptedHeld() lc.Input {
	in := ready()
	in.ReportedReady = true
	in.Shoot.Marks = shootstate.Marks{Managed: true, RuntimeID: rtID, AppliedRuntimeGeneration: 3}
	in.Intent.ShootInSync = false
	return in
}

var review = lc.ActionError{Message: "apply shoot c-1a2b3c: the first apply after adopting it would change 2 value(s)",
	Reason: lc.ReasonAdoptionReviewRequired}

// decideHeld is one provisioning pass over in as the use case runs it: decide, the apply is refused by the review,
// the refusal folded in.
func decideHeld(t *testing.T, in lc.Input) (lc.Input, lc.Decision) {
	t.Helper()
	d := lc.Decide(in, now)
	if d.Action != lc.ActionApplyShoot {
		t.Fatalf("adopted shoot, rendering differs: %s %s %s; want ApplyShoot first", d.State, d.Reason, d.Action)
	}
	in, resume := lc.HeldForReview(in, review)
	if !resume {
		return in, lc.ActionFailed(d, review)
	}
	return in, lc.Decide(in, now)
}

func holdCondition(in lc.Input) (lc.Condition, bool) {
	for _, c := range lc.Conditions(in, nil) {
		if c.Type == lc.ConditionAdoptionReviewRequired {
			return c, true
		}
	}
	return lc.Condition{}, false
}

// TestAdoptionKeepsAReadyRuntimeReady: at the switch a Runtime whose cluster runs the generation KEB last asked for
// stays Ready through the adoption and while the review holds the operator's changes (KEB reads only status.state:
// Pending would stall its update operations); the hold shows in its own condition. Re-runs decide the same.
func TestAdoptionKeepsAReadyRuntimeReady(t *testing.T) {
	in := ready()
	in.ReportedReady = true // written by the previous manager: state Ready, no Ready condition of ours
	in.Shoot.Marks = shootstate.Marks{RuntimeID: rtID, AppliedRuntimeGeneration: 3}
	if d := lc.Decide(in, now); d.Action != lc.ActionAdoptShoot || d.State != lc.StateReady {
		t.Fatalf("adopting a running cluster of the current generation: %s %s %s; want AdoptShoot while Ready", d.State, d.Reason, d.Action)
	}
	for pass := 1; pass <= 3; pass++ {
		in := adoptedHeld()
		if pass > 1 { // the operator never configured it: the previous manager's configuration stands while held
			in.Access.Configuration.AppliedHash, in.Access.Configuration.AppliedAt = "", time.Time{}
		}
		held, d := decideHeld(t, in)
		if d.State != lc.StateReady || d.Reason != lc.ReasonReady || d.Action != lc.ActionNone {
			t.Fatalf("pass %d, held, generation unchanged: %s %s %s (%s); want Ready", pass, d.State, d.Reason, d.Action, d.Message)
		}
		if d.AdoptionHold == "" || !strings.Contains(d.Message, lc.ConditionAdoptionReviewRequired) {
			t.Fatalf("pass %d: the Ready decision does not carry the hold: %q", pass, d.Message)
		}
		if d.RequeueAfter != lc.SlowRecheck {
			t.Fatalf("pass %d: held Ready looks again after %v; want %v (every look tries the held apply)", pass, d.RequeueAfter, lc.SlowRecheck)
		}
		if c, ok := holdCondition(held); !ok || !c.Status || c.Reason != string(lc.ReasonAdoptionReviewRequired) || !strings.Contains(c.Message, "kim migrate") {
			t.Fatalf("pass %d: condition %s = %+v (present %v); want true, AdoptionReviewRequired, naming kim migrate", pass, lc.ConditionAdoptionReviewRequired, c, ok)
		}
	}
}

// TestAdoptionHoldsKEBsChangeVisibly: when KEB changed the Runtime (generation 4, the shoot runs 3) while the review
// holds the apply, the state says that the change waits: Pending with the stable reason AdoptionReviewRequired, never
// Failed (KEB would end its operation), no rate-limited retry. The same holds for the adoption itself.
func TestAdoptionHoldsKEBsChangeVisibly(t *testing.T) {
	in := adoptedHeld()
	in.Intent.Generation = 4
	for pass := 1; pass <= 2; pass++ {
		held, d := decideHeld(t, in)
		if d.State != lc.StatePending || d.Reason != lc.ReasonAdoptionReviewRequired || d.Transient || d.RequeueAfter != lc.SlowRecheck {
			t.Fatalf("pass %d, KEB changed the Runtime while held: %s %s transient %v requeue %v; want Pending %s", pass,
				d.State, d.Reason, d.Transient, d.RequeueAfter, lc.ReasonAdoptionReviewRequired)
		}
		if !strings.Contains(d.Message, "change waits") || d.AdoptionHold == "" {
			t.Fatalf("pass %d: message %q, hold %q; want the change named as waiting", pass, d.Message, d.AdoptionHold)
		}
		if _, ok := holdCondition(held); !ok {
			t.Fatalf("pass %d: no %s condition", pass, lc.ConditionAdoptionReviewRequired)
		}
	}
	adopting := ready()
	adopting.ReportedReady = true
	adopting.Intent.Generation = 4
	adopting.Shoot.Marks = shootstate.Marks{RuntimeID: rtID, AppliedRuntimeGeneration: 3}
	if d := lc.Decide(adopting, now); d.State != lc.StatePending || d.Reason != lc.ReasonAdoptingShoot {
		t.Fatalf("adopting while KEB's change is not applied: %s %s; want Pending %s", d.State, d.Reason, lc.ReasonAdoptingShoot)
	}
	notReady := ready()
	notReady.Shoot.Marks = shootstate.Marks{RuntimeID: rtID, AppliedRuntimeGeneration: 3}
	if d := lc.Decide(notReady, now); d.State != lc.StatePending {
		t.Fatalf("adopting a Runtime that did not report Ready: %s; want Pending", d.State)
	}
}

// TestAdoptionApprovedIsNormal: once the review is approved (kim migrate --apply: the force-patch annotation) the
// apply goes through, the shoot is taken over, and the Runtime is decided as any other: no hold, no condition; a
// later change of KEB is applied at once.
func TestAdoptionApprovedIsNormal(t *testing.T) {
	in := adoptedHeld()
	in.Intent.ForcePatch = true
	if d := lc.Decide(in, now); d.Action != lc.ActionApplyShoot || d.AdoptionHold != "" {
		t.Fatalf("approved: %s %s %s hold %q; want ApplyShoot without hold", d.State, d.Reason, d.Action, d.AdoptionHold)
	}
	taken := ready()
	taken.ReportedReady = true
	if d := lc.Decide(taken, now); d.State != lc.StateReady || d.AdoptionHold != "" || strings.Contains(d.Message, "review") {
		t.Fatalf("taken over: %s %s hold %q: %s; want plain Ready", d.State, d.Reason, d.AdoptionHold, d.Message)
	}
	if _, ok := holdCondition(taken); ok {
		t.Fatalf("taken over: %s still reported", lc.ConditionAdoptionReviewRequired)
	}
	taken.Intent.Generation = 4
	if d := lc.Decide(taken, now); d.Action != lc.ActionApplyShoot || d.Reason != lc.ReasonUpdatingShoot {
		t.Fatalf("KEB's change after the takeover: %s %s; want UpdatingShoot", d.Action, d.Reason)
	}
	// Any other failure of the apply is not a hold.
	if _, resume := lc.HeldForReview(adoptedHeld(), lc.ActionError{Message: "timeout"}); resume {
		t.Fatalf("a transient failure resumed as held")
	}
}

// TestTakeOverKeepsReadyOnThePreviousKubeconfig: right after the adoption the kubeconfig Secret is still the previous
// manager's (filled, no expiry recorded) until the GardenerCluster controller replaces it; a Runtime whose cluster
// runs what KEB asked for stays Ready meanwhile (item 0b). It does not hide anything else: a Runtime that did not
// report Ready, one KEB changed, and a kubeconfig of the operator's own that expired are Pending.
func TestTakeOverKeepsReadyOnThePreviousKubeconfig(t *testing.T) {
	taken := func() lc.Input {
		in := ready()
		in.ReportedReady = true
		in.Shoot.Marks.AppliedRuntimeGeneration = in.Intent.Generation // applied by the operator's adoption pass
		in.Access.SecretExists, in.Access.SecretUnrecorded = false, true
		return in
	}
	if d := lc.Decide(taken(), now); d.State != lc.StateReady || d.Reason != lc.ReasonWaitingForKubeconfig ||
		!strings.Contains(d.Message, "previous infrastructure manager") {
		t.Fatalf("the previous manager's kubeconfig at the take-over: %s %s %q; want Ready while it is replaced", d.State, d.Reason, d.Message)
	}
	for name, in := range map[string]lc.Input{
		"did not report Ready": func() lc.Input { in := taken(); in.ReportedReady = false; return in }(),
		"changed by KEB":       func() lc.Input { in := taken(); in.Intent.Generation++; return in }(),
		"own kubeconfig expired": func() lc.Input {
			in := taken()
			in.Access.SecretUnrecorded = false
			return in
		}(),
	} {
		if d := lc.Decide(in, now); d.State != lc.StatePending {
			t.Errorf("%s: %s %s; want Pending", name, d.State, d.Reason)
		}
	}
}
