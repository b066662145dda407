package lifecycle

import (
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// ActionError is how a failed action is reported back to the state machine.
type ActionError struct {
	// Permanent is true when repeating the same action with the same input cannot succeed (the garden rejected
	// the shoot as invalid or forbidden); otherwise the failure is transient (network, conflict, throttling).
	Permanent bool
	// Message says what went wrong, in the words of the system that refused.
	Message string
	// Reason, when set, is the stable reason to report instead of the action's default one.
	Reason Reason
	// RetryAfter, when set, is not a failure but work in progress: look again after it (no backoff).
	RetryAfter time.Duration
}

// ActionFailed turns the decision whose action failed into the status to report: Failed for permanent problems
// of the spec, Pending with a rate-limited retry for everything else.
func ActionFailed(d Decision, e ActionError) Decision {
	if d.Reason == ReasonWaitingForGardener {
		// Access set up early failed while Gardener still works: nothing to report yet, it is tried again and
		// gets reported like any failure once Gardener has finished.
		return Decision{Step: d.Step, State: StatePending, Reason: d.Reason, RequeueAfter: EarlyRetry,
			Message: d.Message + " Not possible yet: " + e.Message + "."}
	}
	out := Decision{Step: d.Step, State: StatePending, Transient: true}
	switch d.Action {
	case ActionApplyShoot:
		if e.Reason == ReasonAdoptionReviewRequired {
			// Not a failure: a person decides. The approval (an annotation) or a changed Runtime brings a reconcile.
			// Reached only when KEB changed the Runtime since the shoot's generation (HeldForReview): its change waits.
			return Decision{Step: d.Step, State: StatePending, Reason: e.Reason, RequeueAfter: SlowRecheck, AdoptionHold: adoptionHoldMessage(e),
				Message: "The Runtime's change waits for the review of the adopted shoot: " + adoptionHoldMessage(e)}
		}
		if e.Reason == ReasonAuditLogSecretMissing {
			return Decision{Step: d.Step, State: StatePending, Reason: e.Reason, RequeueAfter: SlowRecheck,
				Message: e.Message + ". Create the audit log credentials Secret of the runtime's tenant in the Gardener project " +
					"(shoot.auditLog.tenants.<provider>.<region>.secretName, else shoot.auditLog.secretName); the shoot is applied then"}
		}
		if e.Permanent {
			return Decision{Step: d.Step, State: StateFailed, Reason: ReasonShootRejected, RequeueAfter: SlowRecheck,
				Message: "Gardener rejected the shoot: " + e.Message + ". Fix the Runtime spec or the operator configuration."}
		}
		out.Reason, out.Message = ReasonGardenerUnavailable, "Applying the shoot failed, retrying: "+e.Message
	case ActionConfigureRuntime:
		out.Reason, out.Message = ReasonRuntimeConfigFailed, "Configuring the runtime failed, retrying: "+e.Message
		if e.Reason != "" {
			out.Reason = e.Reason
		}
		switch {
		case e.Permanent:
			out.State, out.Transient, out.RequeueAfter = StateFailed, false, SlowRecheck
			out.Message = "The runtime refused the configuration: " + e.Message + ". Fix the Runtime spec or the landscape configuration."
		case e.RetryAfter > 0:
			out.Transient, out.RequeueAfter, out.Message = false, e.RetryAfter, e.Message
		}
	default:
		out.Reason, out.Message = d.Reason, string(d.Action)+" failed, retrying: "+e.Message
		if out.Reason == "" {
			out.Reason = ReasonGardenerUnavailable
		}
	}
	return out
}

// HeldForReview folds a refused apply into the input. An apply the adoption review holds (ReasonAdoptionReviewRequired)
// marks the input held; resume is true when the shoot runs the current Runtime generation, so that deciding again
// goes on as for a shoot in sync (the cluster KEB asked for runs, and its state must not change at the switch).
// resume is false for every other failure, and when KEB changed the Runtime since: then ActionFailed reports that the
// change waits.
func HeldForReview(in Input, e ActionError) (held Input, resume bool) {
	if e.Reason != ReasonAdoptionReviewRequired {
		return in, false
	}
	in.Intent.AdoptionHold = adoptionHoldMessage(e)
	return in, in.Shoot.Marks.AppliedRuntimeGeneration == in.Intent.Generation
}

// adoptionHoldMessage says what the review holds and how to end it.
func adoptionHoldMessage(e ActionError) string {
	return e.Message + ". The shoot was adopted and the operator's rendering differs from it: review the differences " +
		"(kim migrate lists them), then approve them once with the annotation operator.kyma-project.io/force-patch-reconciliation=true " +
		"(kim migrate --apply does so when nothing blocks), or set runtime.adoptOnly to false in the landscape configuration"
}

// WithShoot returns in with the shoot as an action (retry, restore, delete) left it.
func (in Input) WithShoot(s shootstate.Shoot) Input {
	in.Shoot = s
	return in
}

// WithAppliedShoot returns in with the shoot as ApplyShoot left it: it holds the desired spec, and a forced patch
// is done.
func (in Input) WithAppliedShoot(s shootstate.Shoot) Input {
	in.Shoot = s
	in.Intent.ForcePatch, in.Intent.ShootInSync = false, true
	return in
}

// WithSeed returns in with the result of the seed check.
func (in Input) WithSeed(available bool) Input {
	in.SeedAvailable = &available
	return in
}

// WithGardenerCluster returns in after the GardenerCluster was created or updated.
func (in Input) WithGardenerCluster() Input {
	in.Access.GardenerClusterInSync = true
	return in
}

// WithRuntimeConfigured returns in after the runtime reached the desired configuration at now.
func (in Input) WithRuntimeConfigured(now time.Time) Input {
	in.Access.Configuration.AppliedHash = in.Access.Configuration.DesiredHash
	in.Access.Configuration.AppliedAt = now
	return in
}
