package deletion

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// ReapStep names where a shoot is in its deletion.
type ReapStep string

// Reaper steps.
const (
	StepIgnore        ReapStep = "Ignore"
	StepInvalidRecord ReapStep = "InvalidRecord"
	// StepUnbacked: the shoot's record is not backed by a matching KCP record (see CheckKCPRecord); it is never
	// reaped until a person resolves it (docs/deletion.md).
	StepUnbacked      ReapStep = "NoKCPRecord"
	StepRuntimeExists ReapStep = "RuntimeExists"
	StepRestore       ReapStep = "Restore"
	StepFrozen        ReapStep = "Frozen"
	StepWaitWindow    ReapStep = "WaitWindow"
	StepConfirm       ReapStep = "Confirm"
	StepDelete        ReapStep = "Delete"
	StepWaitGone      ReapStep = "WaitGone"
	StepForceDelete   ReapStep = "ForceDelete"
)

// ReapAction is the one side effect the reaper asks for.
type ReapAction string

// Reaper actions.
const (
	ReapNone ReapAction = ""
	// ReapConfirm re-reads the shoot from the API server and asks the KCP whether the Runtime named in the record
	// exists, then decides again: nothing irreversible happens on a cached observation.
	ReapConfirm ReapAction = "Confirm"
	// ReapDelete sets confirmation.gardener.cloud/deletion=true and deletes the shoot, with the observed UID and
	// resourceVersion as preconditions, after the circuit breaker granted it.
	ReapDelete ReapAction = "Delete"
	// ReapForceDelete sets confirmation.gardener.cloud/force-deletion=true on a stuck deletion.
	ReapForceDelete ReapAction = "ForceDelete"
	// ReapRestore recreates the Runtime from the record (see Restorable); the Runtime controller then cancels the
	// deletion.
	ReapRestore ReapAction = "Restore"
)

// ReapInput is what the reaper observed of one shoot.
type ReapInput struct {
	Shoot shootstate.Shoot
	// RuntimeExists is nil until the KCP was asked (live) whether a Runtime with the record's runtime ID that names
	// this shoot exists (it would take the cluster back).
	RuntimeExists *bool
	// Record is the KCP's record of the deletion of the runtime the shoot's record names (nil: none).
	Record *KCPRecord
	Guard  Guard
}

// ReapDecision is what the reaper does with one shoot now.
type ReapDecision struct {
	Step         ReapStep
	Action       ReapAction
	Message      string
	RequeueAfter time.Duration
	// Stuck is true when Gardener reports deletion errors that allow force-deletion (for the stuck gauge).
	Stuck bool
	// Stop is set when the guard stops the deletion (StepFrozen).
	Stop Stop
	// Reason is the stable reason of StepUnbacked (ReasonNoKCPRecord or ReasonKCPRecordMismatch).
	Reason string
}

// RuntimeRecheck is how soon a due shoot whose runtime still exists is looked at again.
const RuntimeRecheck = 15 * time.Second

// UnbackedRecheck is how often a shoot whose record is not backed by the KCP is looked at again: the KCP record
// appears without a shoot event (the migration, a person's fix).
const UnbackedRecheck = 10 * time.Minute

// FrozenRecheck is how often a stopped reaper looks again even without an event (the brake's own watch event
// usually comes first).
const FrozenRecheck = 5 * time.Minute

// Reap decides about one shoot in the garden. Only shoots the operator created and marked are ever deleted, only
// when the KCP's record of the deletion agrees with the shoot's, only after the later of their due times, only on a
// live observation, only when no Runtime with the recorded ID exists, and never while the guard stops deletions.
func Reap(in ReapInput, p Policy, now time.Time) ReapDecision {
	s := in.Shoot
	pd := s.Marks.PendingDeletion
	if !s.Exists || !s.Marks.Managed || pd == nil {
		return ReapDecision{Step: StepIgnore, Message: "Not a shoot of this operator waiting for deletion."}
	}
	if err := CheckRecord(*pd, p, now); err != nil {
		return ReapDecision{Step: StepInvalidRecord,
			Message: fmt.Sprintf("Shoot %s is kept: its deletion record is not trustworthy (%v); a person must fix or remove the record.", s.Name, err)}
	}
	if err := CheckKCPRecord(s, *pd, in.Record); err != nil {
		reason := ReasonNoKCPRecord
		if errors.Is(err, ErrKCPRecordMismatch) {
			reason = ReasonKCPRecordMismatch
		}
		return ReapDecision{Step: StepUnbacked, Reason: reason, RequeueAfter: UnbackedRecheck,
			Message: fmt.Sprintf("Shoot %s is kept: its deletion record is not backed by the KCP (%v); a person must resolve it.", s.Name, err)}
	}
	if s.Deleting() {
		return reapDeleting(in, p, now)
	}
	if in.RuntimeExists != nil && *in.RuntimeExists {
		// Usually the Runtime is still finishing its own deletion (it marked the shoot and is about to let go);
		// nothing about the shoot changes when it is gone, so look again soon.
		return ReapDecision{Step: StepRuntimeExists, RequeueAfter: RuntimeRecheck,
			Message: fmt.Sprintf("Runtime %s exists again; it takes shoot %s back, the shoot is not deleted.", pd.RuntimeID, s.Name)}
	}
	limit := p.PrivacyLimit(*pd)
	if pd.RestoreRequested && (limit.IsZero() || now.Before(limit)) {
		return ReapDecision{Step: StepRestore, Action: ReapRestore,
			Message: fmt.Sprintf("Restore of runtime %s requested on shoot %s.", pd.RuntimeID, s.Name)}
	}
	if due := p.Due(*pd, *in.Record); now.Before(due) {
		return ReapDecision{Step: StepWaitWindow, RequeueAfter: due.Sub(now),
			Message: fmt.Sprintf("Shoot %s of runtime %s is deleted at %s.", s.Name, pd.RuntimeID, due.UTC().Format(time.RFC3339))}
	}
	if stop, why := in.Guard.Stopped(p); stop != StopNone {
		return ReapDecision{Step: StepFrozen, Stop: stop, RequeueAfter: FrozenRecheck,
			Message: fmt.Sprintf("Shoot %s of runtime %s is due but kept: %s.", s.Name, pd.RuntimeID, why)}
	}
	if !s.Live || in.RuntimeExists == nil {
		return ReapDecision{Step: StepConfirm, Action: ReapConfirm,
			Message: fmt.Sprintf("Shoot %s is due; confirming it and the absence of runtime %s before deleting.", s.Name, pd.RuntimeID)}
	}
	msg := fmt.Sprintf("Deleting shoot %s of runtime %s: its window has passed.", s.Name, pd.RuntimeID)
	if pd.RestoreRequested {
		msg = fmt.Sprintf("Deleting shoot %s of runtime %s: a restore was requested but not completed before the data-privacy limit %s.",
			s.Name, pd.RuntimeID, limit.UTC().Format(time.RFC3339))
	}
	return ReapDecision{Step: StepDelete, Action: ReapDelete, Message: msg}
}

// reapDeleting follows a shoot Gardener is deleting and forces the deletion when it is stuck long enough on codes
// Gardener accepts force-deletion for.
func reapDeleting(in ReapInput, p Policy, now time.Time) ReapDecision {
	s := in.Shoot
	stuck := shootstate.ForceDeletionAllowed(s.Codes())
	switch {
	case !stuck || s.ForceDeletionRequested:
		return ReapDecision{Step: StepWaitGone, Stuck: stuck, Message: fmt.Sprintf("Gardener is deleting shoot %s.", s.Name)}
	case p.ForceDeletionAfter <= 0:
		return ReapDecision{Step: StepWaitGone, Stuck: true,
			Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); force-deletion is disabled.", s.Name, s.GardenerMessage())}
	}
	forceAt := s.DeletionTimestamp.Add(p.ForceDeletionAfter)
	if now.Before(forceAt) {
		return ReapDecision{Step: StepWaitGone, Stuck: true, RequeueAfter: forceAt.Sub(now),
			Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); force-deletion at %s.", s.Name, s.GardenerMessage(), forceAt.UTC().Format(time.RFC3339))}
	}
	if stop, why := in.Guard.Stopped(p); stop != StopNone {
		return ReapDecision{Step: StepFrozen, Stop: stop, Stuck: true, RequeueAfter: FrozenRecheck,
			Message: fmt.Sprintf("Deletion of shoot %s is stuck, but force-deletion waits: %s.", s.Name, why)}
	}
	if !s.Live {
		return ReapDecision{Step: StepConfirm, Action: ReapConfirm, Stuck: true,
			Message: fmt.Sprintf("Deletion of shoot %s is stuck; confirming before forcing it.", s.Name)}
	}
	return ReapDecision{Step: StepForceDelete, Action: ReapForceDelete, Stuck: true,
		Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); setting force-deletion.", s.Name, s.GardenerMessage())}
}

// CheckRecord tells whether a deletion record can be trusted to delete a shoot. The record lives in annotations
// anyone with write access to the shoot can edit, so it must be consistent in itself: it names a runtime, it was
// not written in the future, and its due time is not earlier than its recorded window allows.
func CheckRecord(pd shootstate.PendingDeletion, p Policy, now time.Time) error {
	switch {
	case pd.RuntimeID == "":
		return errors.New("it names no runtime")
	case pd.MarkedAt.IsZero() || pd.DueAt.IsZero():
		return errors.New("its mark or due time is unreadable")
	case pd.MarkedAt.After(now.Add(p.ClockTolerance())):
		return fmt.Errorf("it was marked in the future (%s)", pd.MarkedAt.UTC().Format(time.RFC3339))
	case pd.Window < 0:
		return fmt.Errorf("its window %s is negative", pd.Window)
	case pd.DueAt.Before(pd.MarkedAt.Add(pd.Window)):
		return fmt.Errorf("its due time %s is earlier than its window %s after the mark %s allows",
			pd.DueAt.UTC().Format(time.RFC3339), pd.Window, pd.MarkedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Errors of Restorable.
var (
	ErrNotOurs            = errors.New("the shoot was not created by this operator")
	ErrNotPendingDeletion = errors.New("the shoot is not waiting for deletion")
	ErrDeletionInProgress = errors.New("the shoot is already being deleted by Gardener; it cannot be restored")
	ErrPrivacyLimit       = errors.New("the shoot is kept beyond the data-privacy limit (maxGracePeriod) only because deletions are stopped; it cannot be restored")
)

// Restorable tells whether a shoot can still be brought back: it must be ours, marked, not yet being deleted, and
// within the data-privacy limit. A shoot whose window passed but which the reaper has not deleted yet (brake on)
// can be restored until that limit.
func Restorable(s shootstate.Shoot, p Policy, now time.Time) error {
	switch {
	case !s.Exists || !s.Marks.Managed:
		return ErrNotOurs
	case s.Marks.PendingDeletion == nil:
		return ErrNotPendingDeletion
	case s.Deleting():
		return ErrDeletionInProgress
	}
	if limit := p.PrivacyLimit(*s.Marks.PendingDeletion); !limit.IsZero() && !now.Before(limit) {
		return ErrPrivacyLimit
	}
	return nil
}
