package deletion

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
)

// ReapStep names where a shoot is in its deletion.
type ReapStep string

// Reaper steps.
const (
	StepIgnore      ReapStep = "Ignore"
	StepRestore     ReapStep = "Restore"
	StepFrozen      ReapStep = "Frozen"
	StepWaitWindow  ReapStep = "WaitWindow"
	StepDelete      ReapStep = "Delete"
	StepWaitGone    ReapStep = "WaitGone"
	StepForceDelete ReapStep = "ForceDelete"
)

// ReapAction is the one side effect the reaper asks for.
type ReapAction string

// Reaper actions.
const (
	ReapNone ReapAction = ""
	// ReapDelete sets confirmation.gardener.cloud/deletion=true and deletes the shoot.
	ReapDelete ReapAction = "Delete"
	// ReapForceDelete sets confirmation.gardener.cloud/force-deletion=true on a stuck deletion.
	ReapForceDelete ReapAction = "ForceDelete"
	// ReapRestore recreates the Runtime from the record and cancels the deletion (see Restorable).
	ReapRestore ReapAction = "Restore"
)

// ReapDecision is what the reaper does with one shoot now.
type ReapDecision struct {
	Step         ReapStep
	Action       ReapAction
	Message      string
	RequeueAfter time.Duration
	// Stuck is true when Gardener reports deletion errors (for the stuck-deletions gauge).
	Stuck bool
}

// FrozenRecheck is how often a frozen reaper looks again (the brake is usually lifted by a restart with new flags,
// but a dynamic switch is seen within this time).
const FrozenRecheck = 5 * time.Minute

// Reap decides about one shoot in the garden. Only shoots the operator created and marked are ever deleted.
func Reap(s cluster.Shoot, p Policy, now time.Time) ReapDecision {
	pd := s.Marks.PendingDeletion
	if !s.Exists || !s.Marks.Managed || pd == nil {
		return ReapDecision{Step: StepIgnore, Message: "Not a shoot of this operator waiting for deletion."}
	}
	if pd.RestoreRequested && !s.Deleting() {
		return ReapDecision{Step: StepRestore, Action: ReapRestore,
			Message: fmt.Sprintf("Restore of runtime %s requested on shoot %s.", pd.RuntimeID, s.Name)}
	}
	stuck := s.Deleting() && cluster.ForceDeletionAllowed(s.Codes())
	if p.Frozen {
		return ReapDecision{Step: StepFrozen, RequeueAfter: FrozenRecheck, Stuck: stuck,
			Message: fmt.Sprintf("Deletions are frozen (emergency brake); shoot %s of runtime %s is kept.", s.Name, pd.RuntimeID)}
	}
	if !s.Deleting() {
		if pd.DueAt.IsZero() || pd.MarkedAt.IsZero() {
			return ReapDecision{Step: StepIgnore,
				Message: fmt.Sprintf("Shoot %s has an unreadable deletion record; it is kept until a person fixes or removes the record.", s.Name)}
		}
		due := p.EffectiveDue(*pd)
		if now.Before(due) {
			return ReapDecision{Step: StepWaitWindow, RequeueAfter: due.Sub(now),
				Message: fmt.Sprintf("Shoot %s of runtime %s is deleted at %s.", s.Name, pd.RuntimeID, due.UTC().Format(time.RFC3339))}
		}
		return ReapDecision{Step: StepDelete, Action: ReapDelete,
			Message: fmt.Sprintf("Deleting shoot %s of runtime %s: its window has passed.", s.Name, pd.RuntimeID)}
	}
	if !stuck || s.ForceDeletionRequested {
		return ReapDecision{Step: StepWaitGone, Stuck: stuck, Message: fmt.Sprintf("Gardener is deleting shoot %s.", s.Name)}
	}
	if p.ForceDeletionAfter <= 0 {
		return ReapDecision{Step: StepWaitGone, Stuck: true,
			Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); force-deletion is disabled.", s.Name, s.GardenerMessage())}
	}
	forceAt := s.DeletionTimestamp.Add(p.ForceDeletionAfter)
	if now.Before(forceAt) {
		return ReapDecision{Step: StepWaitGone, Stuck: true, RequeueAfter: forceAt.Sub(now),
			Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); force-deletion at %s.", s.Name, s.GardenerMessage(), forceAt.UTC().Format(time.RFC3339))}
	}
	return ReapDecision{Step: StepForceDelete, Action: ReapForceDelete, Stuck: true,
		Message: fmt.Sprintf("Deletion of shoot %s is stuck (%s); setting force-deletion.", s.Name, s.GardenerMessage())}
}

// Errors of Restorable.
var (
	ErrNotOurs            = errors.New("the shoot was not created by this operator")
	ErrNotPendingDeletion = errors.New("the shoot is not waiting for deletion")
	ErrDeletionInProgress = errors.New("the shoot is already being deleted by Gardener; it cannot be restored")
)

// Restorable tells whether a shoot can still be brought back: it must be ours, marked, and not yet being deleted.
// A shoot whose window passed but which the reaper has not deleted (e.g. brake on) can be restored.
func Restorable(s cluster.Shoot) error {
	switch {
	case !s.Exists || !s.Marks.Managed:
		return ErrNotOurs
	case s.Marks.PendingDeletion == nil:
		return ErrNotPendingDeletion
	case s.Deleting():
		return ErrDeletionInProgress
	}
	return nil
}
