package deletion

import (
	"fmt"
	"time"
)

// The credentials binding of a deleted runtime (a Gardener CredentialsBinding in the project, owned by KEB and the
// account cleanup job) is released the way KEB releases it, but while its shoot waits out the window: KEB's
// deprovisioning step waits at most an hour for the shoot to disappear and skips bindings labelled dirty, and the
// cleanup job wipes a dirty binding's account only once no shoot names it. See docs/adr/0005.

// BindingRelease is what the operator did to the credentials binding of a deleted runtime, as recorded in the KCP
// record of the deletion. The values are stored in DeletionRecords: they are stable.
type BindingRelease string

const (
	// BindingUntouched: nothing was or will be done (no binding, shared or internal, or nothing decided yet).
	BindingUntouched BindingRelease = ""
	// BindingReleasing: the operator recorded that it is about to label the binding dirty; whether the label was
	// written is not known. Recorded before the write, so a crash after it still knows the label is the operator's.
	BindingReleasing BindingRelease = "Releasing"
	// BindingReleased: the binding carries the operator's dirty label for this deletion: labelled for it, or
	// labelled for a sibling runtime's deletion that this one relies on too (OnRelease).
	BindingReleased BindingRelease = "Released"
	// BindingFoundDirty: the binding was labelled dirty by someone else (another deletion sharing it); the
	// operator neither set nor will remove that label.
	BindingFoundDirty BindingRelease = "FoundDirty"
	// BindingNotReleased: labelling failed until BindingReleaseTimeout; the Runtime went without it (KEB's step
	// then waits for the shoot as before). The reaper still leaves the binding as KEB would once the shoot is gone.
	BindingNotReleased BindingRelease = "NotReleased"
	// BindingReturned: after the hold (Policy.BindingReleaseHold) another shoot still named the binding, so the
	// operator removed its dirty label (KEB's step leaves such a binding to its tenant); or the label was gone by
	// then. The deletion holds no label on the binding any more (binding_hold.go).
	BindingReturned BindingRelease = "Returned"
	// BindingKept: after the hold no other shoot named the binding; the operator's dirty label stays until the
	// shoot is gone (KEB labels a binding no shoot names dirty). Still the operator's label.
	BindingKept BindingRelease = "Kept"
)

// Owned tells whether a dirty label on the binding is the operator's own for this deletion.
func (r BindingRelease) Owned() bool {
	return r == BindingReleasing || r == BindingReleased || r == BindingKept
}

// BindingReleaseTimeout bounds how long a deleting Runtime is held for the dirty label: KEB waits an hour for
// the Runtime to disappear, so holding it much longer turns a failed label into a failed deprovisioning anyway.
const BindingReleaseTimeout = 10 * time.Minute

// BindingGivenUp tells whether labelling the binding of a deletion that started at started is given up at now.
func BindingGivenUp(started, now time.Time) bool {
	return !started.IsZero() && now.Sub(started) > BindingReleaseTimeout
}

// Binding is what the operator observed of a CredentialsBinding, reduced to what KEB's deprovisioning step reads.
type Binding struct {
	Name   string
	Exists bool
	// Shared, Internal and Dirty are the labels shared, internal and dirty equal to "true" (what KEB compares).
	Shared, Internal, Dirty bool
	// DirtyLabelled is true when a dirty label is present with any value: KEB's pool skips every binding that has
	// one ("!dirty"), so a value other than "true" still keeps it out of the pool.
	DirtyLabelled bool
	// ResourceVersion pins label writes to this observation.
	ResourceVersion string
}

// Exempt tells a binding KEB's step leaves alone whatever happens to the shoot.
func (b Binding) Exempt() bool { return !b.Exists || b.Shared || b.Internal }

// BindingStep is the one thing to do about a binding next.
type BindingStep string

// Binding steps.
const (
	// BindingDone: nothing (more) to write.
	BindingDone BindingStep = "Done"
	// BindingRecordIntent: store the KCP record with BindingReleasing before labelling.
	BindingRecordIntent BindingStep = "RecordIntent"
	// BindingLabelDirty: set dirty=true (only that label, pinned to the observed resourceVersion).
	BindingLabelDirty BindingStep = "LabelDirty"
	// BindingRemoveDirty: remove the dirty label (pinned to the observed resourceVersion).
	BindingRemoveDirty BindingStep = "RemoveDirty"
)

// BindingDecision is the next step and the state to record once it is done.
type BindingDecision struct {
	Step BindingStep
	// Record is the BindingRelease to store in the KCP record after Step.
	Record  BindingRelease
	Message string
}

// SiblingLabel is what the teardown read of the other deletions naming a binding it found dirty.
type SiblingLabel int

const (
	// SiblingsNotRead: not read yet.
	SiblingsNotRead SiblingLabel = iota
	// NoSiblingLabel: no deletion recorded for another shoot naming the binding holds the operator's label.
	NoSiblingLabel
	// SiblingLabelHeld: a deletion recorded for another shoot naming the binding holds the operator's label
	// (Releasing, Released or Kept): the label is the operator's, set for a sibling runtime of the tenant.
	SiblingLabelHeld
)

// OnRelease decides about the binding of a runtime the teardown is about to let go, whose shoot waits for deletion:
// label it dirty (so KEB's step finishes at once), recording the intent first. recorded is the state stored so far
// for this deletion, started when the Runtime's deletion began. A binding that could not be labelled within
// BindingReleaseTimeout is given up (the Runtime goes; KEB waits as it would without this operator). A binding
// already dirty with the label the operator set for a sibling's deletion is this deletion's label too: its KEB step
// relies on it as much, so it is held (Released) until this deletion's hold is over as well, and given back or kept
// by whichever of the deletions ends last (docs/adr/0005).
func OnRelease(b Binding, recorded BindingRelease, siblings SiblingLabel, started, now time.Time) BindingDecision {
	switch {
	case b.Name == "":
		return BindingDecision{Step: BindingDone, Message: "The Runtime names no credentials binding."}
	case b.Exempt():
		return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s is shared, internal or missing; KEB releases nothing.", b.Name)}
	case b.Dirty && recorded.Owned():
		return BindingDecision{Step: BindingDone, Record: BindingReleased, Message: fmt.Sprintf("Credentials binding %s is labelled dirty for this deletion.", b.Name)}
	case b.Dirty && siblings == SiblingsNotRead:
		return BindingDecision{Step: BindingListUsers, Record: recorded, Message: fmt.Sprintf("Credentials binding %s is already dirty; looking for the deletions of other shoots naming it.", b.Name)}
	case b.Dirty && siblings == SiblingLabelHeld:
		return BindingDecision{Step: BindingDone, Record: BindingReleased,
			Message: fmt.Sprintf("Credentials binding %s carries the dirty label this operator set for the deletion of another runtime of its tenant; this deletion holds it too.", b.Name)}
	case b.Dirty:
		return BindingDecision{Step: BindingDone, Record: BindingFoundDirty, Message: fmt.Sprintf("Credentials binding %s was already labelled dirty.", b.Name)}
	case recorded == BindingNotReleased:
		return BindingDecision{Step: BindingDone, Record: BindingNotReleased, Message: fmt.Sprintf("Credentials binding %s was not labelled dirty; KEB waits for the shoot.", b.Name)}
	case BindingGivenUp(started, now):
		return BindingDecision{Step: BindingDone, Record: BindingNotReleased,
			Message: fmt.Sprintf("Credentials binding %s could not be labelled dirty within %s; the Runtime goes without it and KEB's deprovisioning waits for the shoot (and fails after an hour). Label it dirty=true by hand if the deletion is genuine.", b.Name, BindingReleaseTimeout)}
	case recorded != BindingReleasing:
		return BindingDecision{Step: BindingRecordIntent, Record: BindingReleasing, Message: fmt.Sprintf("Recording that credentials binding %s is labelled dirty.", b.Name)}
	}
	return BindingDecision{Step: BindingLabelDirty, Record: BindingReleased, Message: fmt.Sprintf("Labelling credentials binding %s dirty so KEB's deprovisioning finishes.", b.Name)}
}

// OnRestore decides about the binding of a deletion being taken back at now: a dirty label the operator holds for
// it comes off, so the binding of a live cluster is not marked released (the cleanup job wipes dirty bindings no
// shoot names). A dirty label someone else set is theirs. While another deletion naming the binding holds the
// operator's label within its hold, the label stays: KEB's step of that deletion may still be about to run, and
// that deletion gives the binding back to this cluster at the end of its hold (OnHoldEnd) or when its shoot is gone.
func OnRestore(o HoldObservation, recorded BindingRelease, now time.Time) BindingDecision {
	b := o.Binding
	switch {
	case b.Exempt() || !recorded.Owned() || !b.DirtyLabelled:
		return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s keeps its labels.", b.Name)}
	case !o.UsersRead:
		return BindingDecision{Step: BindingListUsers, Message: fmt.Sprintf("Looking for other deletions holding the dirty label of credentials binding %s.", b.Name)}
	case o.HoldersHeldUntil.After(now):
		return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s stays dirty: the deletion of another runtime of its tenant holds the label until %s, and gives the binding back then.",
			b.Name, o.HoldersHeldUntil.UTC().Format(time.RFC3339))}
	}
	return BindingDecision{Step: BindingRemoveDirty, Message: fmt.Sprintf("Removing the dirty label this operator set on credentials binding %s: its cluster is restored.", b.Name)}
}

// OnShootGone decides about the binding once the shoot of a deletion is gone (read live): leave it as KEB's step
// leaves it when the shoot disappears. o is the binding and the other shoots naming it (spec.credentialsBindingName,
// as KEB checks), read live. KEB labels a binding no shoot names dirty and leaves one another shoot names as it is.
// A dirty label the operator holds for this deletion comes off only when it is given back to the tenant
// (HoldObservation.GivesBack): shoots waiting for deletion are no tenant, and another deletion within its hold or
// the last one waiting relies on the label; it holds the label itself (OnRelease), so it stays theirs.
func OnShootGone(o HoldObservation, recorded BindingRelease, now time.Time) BindingDecision {
	b, usedByOthers := o.Binding, o.OtherUsers > 0
	switch {
	case b.Name == "" || b.Exempt() || recorded == BindingUntouched:
		return BindingDecision{Step: BindingDone, Message: "Nothing to release."}
	case usedByOthers && recorded.Owned() && b.DirtyLabelled && o.GivesBack(now):
		return BindingDecision{Step: BindingRemoveDirty, Message: fmt.Sprintf("Credentials binding %s is used by another shoot; removing the dirty label this operator set.", b.Name)}
	case usedByOthers && recorded.Owned() && b.DirtyLabelled:
		return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s is named only by shoots waiting for deletion, or another deletion naming it is within its hold; the dirty label stays for them.", b.Name)}
	case usedByOthers:
		return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s is used by another shoot; it is left as it is.", b.Name)}
	case !b.Dirty:
		return BindingDecision{Step: BindingLabelDirty, Message: fmt.Sprintf("Credentials binding %s is used by no shoot; labelling it dirty as KEB would.", b.Name)}
	}
	return BindingDecision{Step: BindingDone, Message: fmt.Sprintf("Credentials binding %s is released (dirty) for the account cleanup.", b.Name)}
}
