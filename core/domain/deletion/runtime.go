package deletion

import (
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
)

// RuntimeInput is what the operator observed when a Runtime is being deleted.
type RuntimeInput struct {
	RuntimeID string
	// Plan is the broker plan name label of the Runtime; it selects the window.
	Plan string
	// EverReady is the Runtime's status.provisioningCompleted.
	EverReady bool
	// AccessRemoved is true when the GardenerCluster and the kubeconfig Secret are observed gone.
	AccessRemoved bool
	Shoot         cluster.Shoot
}

// RuntimeAction is the one side effect the Runtime deletion asks for.
type RuntimeAction string

// Runtime deletion actions, in the order they happen.
const (
	// ActionRemoveAccess deletes the GardenerCluster and the kubeconfig Secret.
	ActionRemoveAccess RuntimeAction = "RemoveAccess"
	// ActionMarkShoot records Record on the shoot and, if Hibernate, requests hibernation, in one change.
	ActionMarkShoot RuntimeAction = "MarkShoot"
	// ActionRelease removes the Runtime's finalizer: KEB sees NotFound.
	ActionRelease RuntimeAction = "Release"
)

// RuntimeDecision is the next step of deleting a Runtime.
type RuntimeDecision struct {
	Action RuntimeAction
	// Record is what to write on the shoot (ActionMarkShoot).
	Record *cluster.PendingDeletion
	// Hibernate requests hibernation with the mark; false for shoots deleted at once.
	Hibernate bool
	Message   string
}

// OnRuntimeDeleted decides the next step for a Runtime with a deletion timestamp: remove access first, then mark
// (and hibernate) the shoot, then let the Runtime go. Shoots the Runtime does not own are never touched.
func OnRuntimeDeleted(in RuntimeInput, p Policy, now time.Time) RuntimeDecision {
	s := in.Shoot
	if !in.AccessRemoved {
		return RuntimeDecision{Action: ActionRemoveAccess, Message: "Removing the GardenerCluster and the kubeconfig Secret."}
	}
	switch {
	case !s.Exists:
		return release("No shoot exists; nothing to keep.")
	case s.Marks.PendingDeletion != nil && s.Marks.PendingDeletion.RuntimeID == in.RuntimeID:
		return release(fmt.Sprintf("Shoot %s is marked for deletion at %s.", s.Name, p.EffectiveDue(*s.Marks.PendingDeletion).UTC().Format(time.RFC3339)))
	case !s.OwnedBy(in.RuntimeID):
		return release(fmt.Sprintf("Shoot %s does not belong to runtime %s; it is left untouched.", s.Name, in.RuntimeID))
	case s.Deleting():
		return release(fmt.Sprintf("Shoot %s is already being deleted.", s.Name))
	}
	window := p.Window(in.Plan)
	rec := &cluster.PendingDeletion{RuntimeID: in.RuntimeID, Plan: in.Plan, MarkedAt: now, DueAt: now.Add(window)}
	switch {
	case !in.EverReady && !s.EverSucceeded():
		rec.DueAt = now
		return RuntimeDecision{Action: ActionMarkShoot, Record: rec,
			Message: fmt.Sprintf("Shoot %s never became healthy; it is deleted at once.", s.Name)}
	case window == 0:
		return RuntimeDecision{Action: ActionMarkShoot, Record: rec,
			Message: fmt.Sprintf("Plan %q has no deletion window; shoot %s is deleted at once.", in.Plan, s.Name)}
	}
	return RuntimeDecision{Action: ActionMarkShoot, Record: rec, Hibernate: true,
		Message: fmt.Sprintf("Hibernating shoot %s; it is deleted at %s unless restored.", s.Name, rec.DueAt.UTC().Format(time.RFC3339))}
}

func release(msg string) RuntimeDecision { return RuntimeDecision{Action: ActionRelease, Message: msg} }
