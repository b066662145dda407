package lifecycle

import (
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// Defaults of the state machine.
const (
	DefaultMaxUnknownRetries = 3
	// SlowRecheck is how often problems outside the operator's reach (a taken name, no seed, a rejected spec) are
	// looked at again, in case someone fixed them without changing the Runtime.
	SlowRecheck = 10 * time.Minute
	// FrozenRecheck is how often a Runtime blocked by the deletion brake looks again.
	FrozenRecheck = 5 * time.Minute
	// OldClusterRecheck is how often a Runtime waiting for the reaper looks again (the shoot's deletion event
	// usually comes first).
	OldClusterRecheck = time.Minute
	// EarlyRetry is when access set up ahead of Gardener's Succeeded is tried again after it failed (the new
	// kube-apiserver may not answer yet); Gardener's progress updates usually bring a reconcile sooner.
	EarlyRetry = 10 * time.Second
	// DefaultDriftPeriod is how often the configuration inside a Ready runtime is re-asserted without any change.
	DefaultDriftPeriod = time.Hour
)

// Decide returns the next step for a Runtime that is not being deleted. It is total: every input yields a decision.
func Decide(in Input, now time.Time) Decision {
	d := decide(in, now)
	d.AdoptionHold = in.Intent.AdoptionHold
	return d
}

func decide(in Input, now time.Time) Decision {
	it := in.Intent
	if it.Invalid != nil {
		return failed(StepValidate, ReasonSpecInvalid, SlowRecheck,
			"The Runtime is invalid: %s: %s. Fix the Runtime spec.", it.Invalid.Field, it.Invalid.Message)
	}
	if w := it.Wait; w != nil {
		return pending(w.Step, ActionNone, w.Reason, w.Recheck, "%s", w.Message)
	}
	if d, done := resolveShootName(in, now); done {
		return d
	}
	s := in.Shoot
	if !s.Exists {
		return create(in)
	}
	if d, done := update(in); done {
		return d
	}
	if s.Failed() && s.ObservedGeneration >= s.Generation {
		return failure(in, now)
	}
	if d, done := early(in, now); done {
		return d
	}
	if d, done := gardener(in); done {
		return d
	}
	return access(in, now)
}

// resolveShootName makes sure the shoot name is ours to use.
func resolveShootName(in Input, now time.Time) (Decision, bool) {
	s, it := in.Shoot, in.Intent
	if !s.Exists {
		return Decision{}, false
	}
	if pd := s.Marks.PendingDeletion; s.Marks.Managed && pd != nil {
		return pendingDeletion(in, *pd, now), true
	}
	if !s.Marks.Managed && s.Marks.RuntimeID == it.RuntimeID && !s.Deleting() {
		// Created for this very runtime by the system the operator replaces (same runtime-id annotation): a
		// migration, not a name clash. With patching suspended it is only marked, not changed.
		d := pending(StepResolveShootName, ActionAdoptShoot, ReasonAdoptingShoot, 0,
			"Shoot %s was created for this runtime by the previous infrastructure manager; taking it over.", s.Name)
		if runsWhatKEBAsked(in) {
			// Nothing KEB can see changes at the switch: a running cluster of the current generation stays Ready.
			d.State = StateReady
		}
		return d, true
	}
	if !s.OwnedBy(it.RuntimeID) {
		owner := "no runtime of this operator"
		if s.Marks.Managed {
			owner = "runtime " + s.Marks.RuntimeID
		}
		return failed(StepResolveShootName, ReasonShootNameTaken, SlowRecheck,
			"Shoot %s already exists and belongs to %s. Choose another shoot name or remove the other shoot.", s.Name, owner), true
	}
	if s.Deleting() {
		return pending(StepResolveShootName, ActionNone, ReasonShootBeingDeleted, 0,
			"Shoot %s is being deleted outside the operator; it is created again when Gardener has removed it.", s.Name), true
	}
	return Decision{}, false
}

// runsWhatKEBAsked reports whether the Runtime reported Ready and its shoot, reconciled, holds the current Runtime
// generation (the previous manager records the generation it applied in the same runtime-generation annotation):
// KEB has not changed the Runtime since the cluster it sees running was applied.
func runsWhatKEBAsked(in Input) bool {
	s := in.Shoot
	return in.ReportedReady && s.Marks.AppliedRuntimeGeneration == in.Intent.Generation && s.Reconciled() &&
		!s.HibernationRequested && !s.Hibernated
}

// pendingDeletion decides for a Runtime whose shoot name is held by a cluster waiting for deletion. The Runtime
// that was deleted takes its cluster back when it is created again with the same ID (a KEB retry, a backup applied,
// a restore of the KCP namespace); any other Runtime waits until the reaper has deleted the old cluster after its
// window. Provisioning never deletes a shoot and never shortens a window.
func pendingDeletion(in Input, pd shootstate.PendingDeletion, now time.Time) Decision {
	s, it := in.Shoot, in.Intent
	if s.Deleting() {
		return pending(StepResolveShootName, ActionNone, ReasonOldClusterDeleting, 0,
			"Shoot name %s belongs to the cluster of deleted runtime %s, which Gardener is deleting; a new cluster is created when it is gone.",
			s.Name, pd.RuntimeID)
	}
	// The record alone is not enough: it lives in annotations people can edit. The shoot must also have been
	// created (or adopted) for this runtime, or a record naming it would hand another runtime's cluster over.
	if pd.RuntimeID == it.RuntimeID && s.Marks.RuntimeID == it.RuntimeID {
		return pending(StepResolveShootName, ActionRestoreCluster, ReasonRestoringCluster, 0,
			"Runtime %s was created again while its cluster waited for deletion: taking shoot %s back (cancelling the deletion, waking it up).",
			it.RuntimeID, s.Name)
	}
	due := in.DeletionPolicy.EffectiveDue(pd)
	if now.Before(due) {
		return pending(StepResolveShootName, ActionNone, ReasonOldClusterPendingDeletion, due.Sub(now)+time.Second,
			"Shoot name %s belongs to the cluster of deleted runtime %s, which waits for deletion until %s; this runtime gets a fresh cluster after that (the window is never shortened).",
			s.Name, pd.RuntimeID, due.UTC().Format(time.RFC3339))
	}
	if in.DeletionsFrozen {
		return pending(StepResolveShootName, ActionNone, ReasonDeletionsFrozen, FrozenRecheck,
			"Shoot name %s belongs to the cluster of deleted runtime %s, whose window passed at %s, but deletions are stopped (emergency brake, circuit breaker or clock check); this runtime waits until they resume.",
			s.Name, pd.RuntimeID, due.UTC().Format(time.RFC3339))
	}
	return pending(StepResolveShootName, ActionNone, ReasonOldClusterPendingDeletion, OldClusterRecheck,
		"Shoot name %s belongs to the cluster of deleted runtime %s, whose window passed at %s; waiting for the reaper to delete it.",
		s.Name, pd.RuntimeID, due.UTC().Format(time.RFC3339))
}

func create(in Input) Decision {
	it := in.Intent
	if it.EnforceSeedLocation {
		if in.SeedAvailable == nil {
			return pending(StepCheckSeed, ActionCheckSeed, ReasonCheckingSeed, 0,
				"Checking for a seed in region %s (enforceSeedLocation).", it.Region)
		}
		if !*in.SeedAvailable {
			return failed(StepCheckSeed, ReasonSeedNotAvailable, SlowRecheck,
				"No usable Gardener seed in region %s, and enforceSeedLocation requires one. Unset enforceSeedLocation or ask the Gardener operators for a seed in the region.", it.Region)
		}
	}
	return pending(StepApplyShoot, ActionApplyShoot, ReasonCreatingShoot, 0, "Creating shoot %s.", it.ShootName)
}

// update re-applies the spec when the Runtime changed, the operator's generated spec changed, someone else changed
// the shoot spec (drift), or a person forced it.
func update(in Input) (Decision, bool) {
	s, it := in.Shoot, in.Intent
	if it.AdoptionHold != "" && s.Marks.AppliedRuntimeGeneration == it.Generation {
		// The shoot runs the current generation; the operator's own differences wait for the review.
		return Decision{}, false
	}
	var why string
	switch {
	case s.Marks.AppliedRuntimeGeneration != it.Generation:
		why = fmt.Sprintf("Runtime generation %d", it.Generation)
	case it.ForcePatch:
		why = "forced by annotation"
	case it.DesiredSpecHash != "" && s.Marks.AppliedSpecHash != it.DesiredSpecHash:
		why = "the generated shoot spec changed"
	case !it.ShootInSync:
		why = "the shoot spec was changed outside the operator"
	default:
		return Decision{}, false
	}
	if it.SuspendPatch && !it.ForcePatch { // a person forcing one apply overrides the suspension once
		if s.Marks.AppliedRuntimeGeneration != it.Generation {
			return pending(StepApplyShoot, ActionNone, ReasonPatchSuspended, 0,
				"Runtime generation %d is not applied to shoot %s because patching is suspended (annotation suspend-patch-reconciliation). Remove the annotation to apply it.",
				it.Generation, s.Name), true
		}
		return Decision{}, false // only drift or configuration: keep the shoot as it is while suspended
	}
	return pending(StepApplyShoot, ActionApplyShoot, ReasonUpdatingShoot, 0, "Updating shoot %s: %s.", s.Name, why), true
}

// early sets up access while Gardener is still working, as soon as the shoot's kube-apiserver is advertised, so
// that issuing the kubeconfig and configuring the runtime are not on the path from Gardener's Succeeded to Ready.
// Decisions keep the reason WaitingForGardener: that is what the Runtime waits for. Waiting for the Secret is not
// a step here; its watch event brings the next reconcile.
func early(in Input, now time.Time) (Decision, bool) {
	s, it, a := in.Shoot, in.Intent, in.Access
	if s.Reconciled() || !s.APIServerAdvertised || s.HibernationRequested || s.Hibernated {
		return Decision{}, false
	}
	switch {
	case !a.GardenerClusterInSync:
		return pending(StepEnsureGardenerCluster, ActionEnsureGardenerCluster, ReasonWaitingForGardener, 0,
			"%s; creating GardenerCluster %s meanwhile.", s.GardenerMessage(), it.RuntimeID), true
	case a.SecretExists && configurationDue(in, now):
		return pending(StepConfigureRuntime, ActionConfigureRuntime, ReasonWaitingForGardener, 0,
			"%s; configuring the runtime meanwhile.", s.GardenerMessage()), true
	}
	return Decision{}, false
}

// gardener waits for Gardener to reconcile the latest spec.
func gardener(in Input) (Decision, bool) {
	s := in.Shoot
	if s.ObservedGeneration < s.Generation || s.LastOperation == nil {
		return pending(StepWaitForGardener, ActionNone, ReasonWaitingForGardener, 0,
			"Waiting for Gardener to pick up shoot %s generation %d.", s.Name, s.Generation), true
	}
	if !s.Reconciled() {
		return pending(StepWaitForGardener, ActionNone, ReasonWaitingForGardener, 0, "%s.", s.GardenerMessage()), true
	}
	return Decision{}, false
}

func failure(in Input, now time.Time) Decision {
	s := in.Shoot
	class := shootstate.Classify(s.Codes())
	if class == shootstate.NotRetryable {
		return failed(StepWaitForGardener, ReasonGardenerFailed, 0,
			"%s. Gardener cannot use the cloud account: check the credentials of the credentials binding; the runtime recovers when Gardener reconciles successfully.",
			s.GardenerMessage())
	}
	attempts := 0
	if s.Marks.RetryShootGeneration == s.Generation {
		attempts = s.Marks.RetryAttempts
	}
	maxUnknown := in.MaxUnknownRetries
	if maxUnknown == 0 {
		maxUnknown = DefaultMaxUnknownRetries
	}
	if class == shootstate.RetryUnknown && attempts >= maxUnknown {
		return failed(StepWaitForGardener, ReasonGardenerFailed, 0,
			"%s. Gave up after %d retries because Gardener reported no error code; ask the Gardener operators.", s.GardenerMessage(), attempts)
	}
	failedAt := s.LastOperation.LastUpdate
	if attempts > 0 && !s.Marks.RetryRequestedAt.Before(failedAt) {
		return pending(StepWaitForGardener, ActionNone, ReasonGardenerRetryScheduled, 0,
			"%s. Retry %d requested; waiting for Gardener to start it.", s.GardenerMessage(), attempts)
	}
	backoff := in.Backoff
	if backoff == (shootstate.Backoff{}) {
		backoff = shootstate.DefaultBackoff
	}
	due := failedAt.Add(backoff.Delay(attempts))
	if now.Before(due) {
		return pending(StepWaitForGardener, ActionNone, ReasonGardenerRetryScheduled, due.Sub(now),
			"%s. The error may clear on its own; retry %d at %s.", s.GardenerMessage(), attempts+1, due.UTC().Format(time.RFC3339))
	}
	d := pending(StepWaitForGardener, ActionRetryShoot, ReasonGardenerRetryScheduled, 0,
		"%s. Asking Gardener to retry (attempt %d).", s.GardenerMessage(), attempts+1)
	d.RetryAttempt = attempts + 1
	return d
}

func access(in Input, now time.Time) Decision {
	it, a := in.Intent, in.Access
	switch {
	case !a.GardenerClusterInSync:
		return pending(StepEnsureGardenerCluster, ActionEnsureGardenerCluster, ReasonCreatingGardenerCluster, 0,
			"Shoot %s is reconciled; creating GardenerCluster %s.", it.ShootName, it.RuntimeID)
	case !a.SecretExists:
		d := pending(StepWaitForKubeconfig, ActionNone, ReasonWaitingForKubeconfig, 0,
			"Waiting for the kubeconfig Secret of GardenerCluster %s.", it.RuntimeID)
		if a.SecretUnrecorded && runsWhatKEBAsked(in) {
			// The take-over of a running cluster: the previous manager's kubeconfig serves until the GardenerCluster
			// controller replaces it, and nothing KEB can see changes at the switch.
			d.State = StateReady
			d.Message = fmt.Sprintf("The kubeconfig Secret of GardenerCluster %s is the previous infrastructure manager's; "+
				"the operator replaces it with one of its own.", it.RuntimeID)
		}
		return d
	case configurationDue(in, now):
		return pending(StepConfigureRuntime, ActionConfigureRuntime, ReasonConfiguringRuntime, 0,
			"Configuring the runtime (kyma-system, provisioning info, OIDC, administrators).")
	}
	wait := driftWait(in, now)
	msg := fmt.Sprintf("Shoot %s is reconciled, the kubeconfig Secret exists and the runtime is configured.", it.ShootName)
	if it.AdoptionHold != "" {
		msg += " The operator's changes to the adopted shoot wait for a review (condition " + ConditionAdoptionReviewRequired + ")."
		wait = SlowRecheck // nothing of the operator's is due while held; the approval brings a reconcile
	}
	// Nothing watches inside the runtime: look again when the configuration is to be re-asserted.
	return Decision{Step: StepReady, State: StateReady, Reason: ReasonReady, RequeueAfter: wait, Message: msg}
}

func pending(step Step, action Action, reason Reason, requeue time.Duration, format string, args ...any) Decision {
	return Decision{Step: step, Action: action, State: StatePending, Reason: reason, RequeueAfter: requeue,
		Message: fmt.Sprintf(format, args...)}
}

func failed(step Step, reason Reason, requeue time.Duration, format string, args ...any) Decision {
	return Decision{Step: step, State: StateFailed, Reason: reason, RequeueAfter: requeue, Message: fmt.Sprintf(format, args...)}
}
