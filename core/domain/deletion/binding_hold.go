package deletion

import (
	"fmt"
	"time"
)

// The hold: the dirty label the teardown puts on a deleted runtime's credentials binding is there for KEB's
// deprovisioning step of that deletion, which runs once the Runtime is gone and finishes at once on a dirty binding.
// KEB gives every runtime of a global account the same binding (it selects tenantName=<GA>,!dirty before it claims
// a new one), so while another shoot names the binding the label also sends the account's next runtime into a fresh
// cloud account. The label therefore stays only for the hold, then comes off if another shoot still names the
// binding (what KEB's own step leaves such a binding as). See docs/adr/0005.

// DefaultBindingReleaseHold is the hold when the policy sets none: KEB's step runs right after the Runtime is gone
// and waits at most an hour for the shoot there, so the label outlasts every run of the step for this deletion
// with room to spare.
const DefaultBindingReleaseHold = 2 * time.Hour

// BindingHold is Policy.BindingReleaseHold or its default.
func (p Policy) BindingHold() time.Duration {
	if p.BindingReleaseHold > 0 {
		return p.BindingReleaseHold
	}
	return DefaultBindingReleaseHold
}

// BindingHoldEnd is when the hold of the binding of the deletion rec ends: the hold after the Runtime was let go.
func (p Policy) BindingHoldEnd(rec KCPRecord) time.Time { return rec.MarkedAt.Add(p.BindingHold()) }

// HoldObservation is what the operator read live of a deletion's binding and of the other shoots naming it, at
// the end of the deletion's hold (OnHoldEnd) or once its shoot is gone (OnShootGone).
type HoldObservation struct {
	Binding Binding
	// UsersRead is true once OtherUsers, LiveUsers and OthersHeldUntil were read live.
	UsersRead bool
	// OtherUsers is the number of shoots other than this deletion's that name the binding
	// (spec.credentialsBindingName, as KEB checks), shoots waiting for deletion included.
	OtherUsers int
	// LiveUsers is the number of those that wait for no deletion (no deletion mark, no deletion record of theirs,
	// not being deleted): the tenant's clusters the binding is given back to. A shoot waiting for deletion never
	// counts: its own deletion relies on the label (its KEB step) or, once its hold is over, it is the binding's
	// last user, whose label stays until its shoot is gone.
	LiveUsers int
	// OthersHeldUntil is the latest hold end of the other deletions recorded for those shoots that name the
	// binding (zero: none). KEB's step of such a deletion may still be about to run; it needs the label too.
	OthersHeldUntil time.Time
	// Holders is the number of those deletions that hold the operator's label on the binding (Releasing,
	// Released, Kept), and HoldersHeldUntil the latest hold end among them (zero: none).
	Holders          int
	HoldersHeldUntil time.Time
}

// GivesBack tells whether the operator's dirty label may come off the binding at now: a shoot that waits for no
// deletion names it (the tenant gets it back), and no other deletion naming it is within its hold.
func (o HoldObservation) GivesBack(now time.Time) bool {
	return o.UsersRead && o.LiveUsers > 0 && !o.OthersHeldUntil.After(now)
}

// HoldDecision is the next step about a binding whose hold ended, and when to look again (Step BindingWait).
type HoldDecision struct {
	BindingDecision
	Until time.Time
}

// Binding steps of the hold end (besides BindingDone and BindingRemoveDirty).
const (
	// BindingListUsers: read live which other shoots name the binding and the deletions recorded for them.
	BindingListUsers BindingStep = "ListUsers"
	// BindingWait: another deletion's hold still runs; look again at HoldDecision.Until.
	BindingWait BindingStep = "Wait"
)

// OnHoldEnd decides about the binding of a deletion recorded as recorded whose hold ended at now. Only the
// operator's label this deletion holds (BindingReleased) is ever removed, and only while the binding still carries
// it (dirty="true"), a shoot that waits for no deletion names the binding and no other deletion naming it is within
// its hold. Shoots waiting for deletion are no tenant to give the binding back to: the last of them keeps the label
// (the reaper leaves the binding dirty when the shoot is gone). A label someone else set (BindingFoundDirty) is
// never this deletion's to remove.
func OnHoldEnd(o HoldObservation, recorded BindingRelease, now time.Time) HoldDecision {
	b := o.Binding
	done := func(r BindingRelease, msg string) HoldDecision {
		return HoldDecision{BindingDecision: BindingDecision{Step: BindingDone, Record: r, Message: msg}}
	}
	switch {
	case recorded != BindingReleased:
		return done(recorded, "The hold is over; nothing of the operator's to take back.")
	case b.Exempt() || !b.Dirty:
		return done(BindingReturned, fmt.Sprintf("Credentials binding %s no longer carries the operator's dirty label.", b.Name))
	case !o.UsersRead:
		return HoldDecision{BindingDecision: BindingDecision{Step: BindingListUsers, Record: recorded,
			Message: fmt.Sprintf("The hold of credentials binding %s is over; looking for other shoots naming it.", b.Name)}}
	case o.LiveUsers == 0 && o.OtherUsers == 0:
		return done(BindingKept, fmt.Sprintf("Credentials binding %s is named by no other shoot; it stays dirty until its shoot is gone.", b.Name))
	case o.LiveUsers == 0:
		return done(BindingKept, fmt.Sprintf("Credentials binding %s is named only by shoots waiting for deletion; it stays dirty for them until the last one is gone.", b.Name))
	case !o.GivesBack(now):
		return HoldDecision{Until: o.OthersHeldUntil, BindingDecision: BindingDecision{Step: BindingWait, Record: recorded,
			Message: fmt.Sprintf("Credentials binding %s stays dirty until %s: KEB's step of another deletion naming it may still run.",
				b.Name, o.OthersHeldUntil.UTC().Format(time.RFC3339))}}
	}
	return HoldDecision{BindingDecision: BindingDecision{Step: BindingRemoveDirty, Record: BindingReturned,
		Message: fmt.Sprintf("Removing the dirty label this operator set on credentials binding %s: the hold is over and another shoot of its tenant, waiting for no deletion, names it, so KEB selects it for the tenant again.", b.Name)}}
}
