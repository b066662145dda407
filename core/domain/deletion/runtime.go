package deletion

import (
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// RuntimeInput is what the operator observed when a Runtime is being deleted.
type RuntimeInput struct {
	RuntimeID string
	// Namespace is the Runtime's KCP namespace; it is recorded so a restore goes back there only.
	Namespace string
	// Plan is the broker plan name label of the Runtime; with the plan recorded on the shoot it selects the window.
	Plan string
	// EverReady is the Runtime's status.provisioningCompleted.
	EverReady bool
	// AccessRemoved is true when the GardenerCluster and the kubeconfig Secret are observed gone.
	AccessRemoved bool
	// Shoot is the shoot named by the Runtime. Only a live observation (Shoot.Live) leads to a decision about it:
	// a cache that has not seen the shoot yet must not let the Runtime go with its cluster unmarked.
	Shoot shootstate.Shoot
	// RestoreDocumentSize is the size of the Runtime as a restore document, in bytes.
	RestoreDocumentSize int
}

// RuntimeAction is the one side effect the Runtime deletion asks for.
type RuntimeAction string

// Runtime deletion actions, in the order they happen.
const (
	// ActionRemoveAccess deletes the GardenerCluster and the kubeconfig Secret.
	ActionRemoveAccess RuntimeAction = "RemoveAccess"
	// ActionConfirmShoot reads the shoot from the API server before anything irreversible is decided.
	ActionConfirmShoot RuntimeAction = "ConfirmShoot"
	// ActionAdoptShoot takes over a shoot the previous infrastructure manager created for this runtime, so that
	// it can be marked (a Runtime deleted before its shoot was adopted must not orphan the shoot).
	ActionAdoptShoot RuntimeAction = "AdoptShoot"
	// ActionMarkShoot records KCPRecord in the KCP, then Record on the shoot and, if Hibernate, requests
	// hibernation, in one change.
	ActionMarkShoot RuntimeAction = "MarkShoot"
	// ActionRelease removes the Runtime's finalizer: KEB sees NotFound. With RuntimeDecision.KCPRecord, that record
	// is stored in the KCP first (the reaper deletes no shoot without it).
	ActionRelease RuntimeAction = "Release"
)

// MaxRestoreDocument bounds the Runtime recorded on a shoot for a restore. Kubernetes limits all annotations of an
// object to 256 KiB together, and the shoot carries Gardener's and the operator's other annotations.
const MaxRestoreDocument = 64 << 10

// RuntimeDecision is the next step of deleting a Runtime.
type RuntimeDecision struct {
	Action RuntimeAction
	// Record is what to write on the shoot (ActionMarkShoot).
	Record *shootstate.PendingDeletion
	// Hibernate requests hibernation with the mark; false for shoots deleted at once.
	Hibernate bool
	// KeepRestoreDocument is false when the Runtime is too large to be recorded: the shoot is still marked and
	// deleted safely, but it can only be restored by re-creating the Runtime (same ID) by hand.
	KeepRestoreDocument bool
	// KCPRecord is the deletion to record in the KCP: before the shoot is marked (ActionMarkShoot; the reaper
	// must find it when it sees the mark) and again before the Runtime is released (ActionRelease of a shoot marked
	// for this runtime) unless it is the same.
	KCPRecord *KCPRecord
	Message   string
}

// OnRuntimeDeleted decides the next step for a Runtime with a deletion timestamp: remove access first, confirm the
// shoot live, adopt a predecessor's shoot, mark (and hibernate) the shoot, then let the Runtime go. Shoots the
// Runtime does not own are never touched.
func OnRuntimeDeleted(in RuntimeInput, p Policy, now time.Time) RuntimeDecision {
	s := in.Shoot
	if !in.AccessRemoved {
		return RuntimeDecision{Action: ActionRemoveAccess, Message: "Removing the GardenerCluster and the kubeconfig Secret."}
	}
	if !s.Live {
		return RuntimeDecision{Action: ActionConfirmShoot, Message: "Reading the shoot from the garden before deciding about it."}
	}
	pd := s.Marks.PendingDeletion
	switch {
	case !s.Exists:
		return release("No shoot exists; nothing to keep.")
	case s.Marks.Managed && pd != nil && pd.RuntimeID == in.RuntimeID && !s.OwnedBy(in.RuntimeID):
		// A record naming this runtime on the shoot of another one was not written by this operator: recording it
		// in the KCP would make someone else's cluster deletable.
		return release(fmt.Sprintf("Shoot %s belongs to runtime %s but carries a deletion record naming runtime %s; it is left untouched.",
			s.Name, s.Marks.RuntimeID, in.RuntimeID))
	case s.Marks.Managed && pd != nil && pd.RuntimeID == in.RuntimeID && s.Deleting():
		// The reaper deleted it already (with the KCP record of the earlier deletion): nothing to record anew.
		return release(fmt.Sprintf("Shoot %s is already being deleted.", s.Name))
	case s.Marks.Managed && pd != nil && pd.RuntimeID == in.RuntimeID:
		// The KCP record is computed here, not copied from the shoot: a record someone wrote on the shoot just
		// before (window 0, marked a week ago) must not become the KCP's. Right after this operator marked the
		// shoot both are the same; a release retried later records a due time a little later.
		rec := kcpRecordAt(in, p, now)
		if pd.DueAt.After(rec.DueAt) {
			rec.DueAt = pd.DueAt
		}
		d := release(fmt.Sprintf("Shoot %s is marked for deletion at %s.", s.Name, p.Due(*pd, rec).UTC().Format(time.RFC3339)))
		d.KCPRecord = &rec
		return d
	case s.Marks.Managed && pd != nil:
		return release(fmt.Sprintf("Shoot %s waits for the deletion of runtime %s; it is left untouched.", s.Name, pd.RuntimeID))
	case !s.Marks.Managed && s.Marks.RuntimeID == in.RuntimeID && in.RuntimeID != "" && !s.Deleting():
		return RuntimeDecision{Action: ActionAdoptShoot,
			Message: fmt.Sprintf("Shoot %s was created for this runtime by the previous infrastructure manager; taking it over to mark it for deletion.", s.Name)}
	case !s.OwnedBy(in.RuntimeID):
		return release(fmt.Sprintf("Shoot %s does not belong to runtime %s; it is left untouched.", s.Name, in.RuntimeID))
	case s.Deleting():
		return release(fmt.Sprintf("Shoot %s is already being deleted.", s.Name))
	}
	window, plan := markWindow(in, p)
	rec := &shootstate.PendingDeletion{RuntimeID: in.RuntimeID, RuntimeNamespace: in.Namespace, Plan: plan,
		MarkedAt: now, DueAt: now.Add(window), Window: window}
	kcp := kcpRecordAt(in, p, now)
	d := RuntimeDecision{Action: ActionMarkShoot, Record: rec, KCPRecord: &kcp, KeepRestoreDocument: in.RestoreDocumentSize <= MaxRestoreDocument}
	switch {
	case neverHealthy(in):
		d.Message = fmt.Sprintf("Shoot %s never became healthy; it is deleted at once.", s.Name)
	case window == 0:
		d.Message = fmt.Sprintf("Plan %q has no deletion window; shoot %s is deleted at once.", plan, s.Name)
	default:
		d.Hibernate = true
		d.Message = fmt.Sprintf("Hibernating shoot %s; it is deleted at %s unless restored.", s.Name, rec.DueAt.UTC().Format(time.RFC3339))
	}
	if !d.KeepRestoreDocument {
		d.Message += fmt.Sprintf(" The Runtime (%d bytes) is too large to be recorded on the shoot (limit %d): kim restore cannot bring it back; re-create the Runtime with the same ID inside the window instead.",
			in.RestoreDocumentSize, MaxRestoreDocument)
	}
	return d
}

func release(msg string) RuntimeDecision { return RuntimeDecision{Action: ActionRelease, Message: msg} }

// neverHealthy tells a cluster that never became healthy: it is deleted at once, whatever its plan.
func neverHealthy(in RuntimeInput) bool { return !in.EverReady && !in.Shoot.EverSucceeded() }

// markWindow is the window the deletion of in gets at its mark, and the plan it is taken from.
func markWindow(in RuntimeInput, p Policy) (time.Duration, string) {
	window, plan := p.WindowFor(in.Plan, in.Shoot.Marks.Plan)
	if neverHealthy(in) {
		window = 0
	}
	return window, plan
}

// kcpRecordAt is the KCP record of deleting in at now, with the window the operator gives it.
func kcpRecordAt(in RuntimeInput, p Policy, now time.Time) KCPRecord {
	window, _ := markWindow(in, p)
	return KCPRecord{RuntimeID: in.RuntimeID, RuntimeNamespace: in.Namespace, ShootName: in.Shoot.Name, ShootUID: in.Shoot.UID,
		MarkedAt: now, DueAt: now.Add(window)}
}
