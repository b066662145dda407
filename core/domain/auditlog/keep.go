package auditlog

import (
	"fmt"
	"time"
)

// ReservationTimeout is how long a reservation of a runtime that exists but no longer asks for a tenant is kept
// before it is given back (a runtime that still asks resumes its claim long before).
const ReservationTimeout = 10 * time.Minute

// ReleaseRecheck is how often a tenant due for release but not yet Assigned is looked at again without an event.
const ReleaseRecheck = 5 * time.Minute

// Owner is what the operator observed about the runtime a tenant is reserved for or assigned to.
type Owner struct {
	// RuntimeExists: a Runtime with the runtime ID exists in the KCP (asked live); Enabled is its
	// auditLogAccessEnabled.
	RuntimeExists, Enabled bool
	// Provisioned: the runtime's cluster was ready once, so its API server can be written to.
	Provisioned bool
	// HoldsOther names another tenant assigned to the runtime ("" when none).
	HoldsOther string
	// ShootExists is nil until the garden was asked (live) whether the runtime's cluster still exists: a shoot
	// that belongs to the runtime, also while it waits for deletion or Gardener deletes it. ShootName is that
	// shoot's name ("" when none was found).
	ShootExists *bool
	ShootName   string
}

// KeepAction is the one write a keeper decision asks for.
type KeepAction string

// Keeper actions.
const (
	KeepNone KeepAction = ""
	// KeepConfirmShoot asks the garden whether the runtime's cluster still exists, then decides again.
	KeepConfirmShoot KeepAction = "ConfirmShoot"
	// KeepUnreserve gives back a reservation left behind by an interrupted claim.
	KeepUnreserve KeepAction = "Unreserve"
	// KeepRelease sets spec.orphaned for the landscape's cleanup: its runtime and cluster are gone and the audit
	// log manager shows the tenant Assigned (it accepts orphaned only then).
	KeepRelease KeepAction = "Release"
	// KeepCopyCredentials makes the read credentials in the runtime match the tenant's.
	KeepCopyCredentials KeepAction = "CopyCredentials"
)

// KeepDecision is what to do with one tenant now.
type KeepDecision struct {
	Action  KeepAction
	Message string
	// RequeueAfter asks to look again without an event (0: only on events and the periodic resync).
	RequeueAfter time.Duration
}

// DecideKeep decides about one tenant at now. A tenant is released only when its runtime is gone and its cluster
// too (the cluster stays through the deletion grace window, and a runtime restored within it keeps its tenant);
// a reservation is given back only when no claim can follow it any more.
func DecideKeep(t Tenant, o Owner, now time.Time) KeepDecision {
	switch {
	case t.Orphaned || (t.AssignedTo == "" && t.ReservedFor == ""):
		return KeepDecision{}
	case t.AssignedTo == "":
		return decideReservation(t, o, now)
	case o.RuntimeExists:
		switch {
		case t.ReadCredentials.Name == "":
			return KeepDecision{Message: fmt.Sprintf("Tenant %s of runtime %s has no read credentials to copy.", t.Name, t.AssignedTo)}
		case !o.Provisioned:
			return KeepDecision{Message: fmt.Sprintf("Runtime %s is not provisioned yet; the read credentials of tenant %s are copied once it is.", t.AssignedTo, t.Name)}
		}
		return KeepDecision{Action: KeepCopyCredentials,
			Message: fmt.Sprintf("Copying the read credentials of tenant %s into runtime %s.", t.Name, t.AssignedTo)}
	case o.ShootExists == nil:
		return KeepDecision{Action: KeepConfirmShoot,
			Message: fmt.Sprintf("Runtime %s of tenant %s is gone; checking whether its cluster is gone too.", t.AssignedTo, t.Name)}
	case *o.ShootExists:
		return KeepDecision{Message: fmt.Sprintf("Runtime %s is deleted but its cluster %s still exists (deletion grace window); tenant %s is kept.",
			t.AssignedTo, o.ShootName, t.Name)}
	case t.State != StateAssigned:
		// The audit log manager accepts spec.orphaned only on an Assigned tenant; its status change wakes us.
		return KeepDecision{RequeueAfter: ReleaseRecheck, Message: fmt.Sprintf(
			"Runtime %s and its cluster are gone, but tenant %s is in state %q, not Assigned; it is released once the audit log manager shows it Assigned.",
			t.AssignedTo, t.Name, t.State)}
	}
	return KeepDecision{Action: KeepRelease,
		Message: fmt.Sprintf("Runtime %s and its cluster are gone; releasing tenant %s (spec.orphaned) for the landscape's cleanup.", t.AssignedTo, t.Name)}
}

func decideReservation(t Tenant, o Owner, now time.Time) KeepDecision {
	switch {
	case o.HoldsOther != "":
		return KeepDecision{Action: KeepUnreserve,
			Message: fmt.Sprintf("Runtime %s holds tenant %s; giving back its reservation of %s.", t.ReservedFor, o.HoldsOther, t.Name)}
	case !o.RuntimeExists:
		return KeepDecision{Action: KeepUnreserve,
			Message: fmt.Sprintf("Runtime %s is gone; giving back its reservation of tenant %s.", t.ReservedFor, t.Name)}
	case o.Enabled:
		return KeepDecision{Message: fmt.Sprintf("Runtime %s is claiming tenant %s.", t.ReservedFor, t.Name)}
	}
	due := t.ReservedAt.Add(ReservationTimeout)
	if !t.ReservedAt.IsZero() && now.Before(due) {
		return KeepDecision{RequeueAfter: due.Sub(now),
			Message: fmt.Sprintf("Runtime %s no longer asks for a tenant; its reservation of %s is given back at %s.", t.ReservedFor, t.Name, due.UTC().Format(time.RFC3339))}
	}
	return KeepDecision{Action: KeepUnreserve,
		Message: fmt.Sprintf("Runtime %s no longer asks for a tenant; giving back its reservation of %s.", t.ReservedFor, t.Name)}
}

// Stats counts the pool by state.
type Stats struct {
	// Free tenants can be claimed by some runtime (usable, neither reserved, claimed nor orphaned).
	Free int
	// Reserved are in the middle of a claim; Claimed serve a runtime; Orphaned wait for the landscape's cleanup;
	// Unusable are not approved (Pending, UnrecoverableError), lack a subaccount ID, service URL or write
	// credentials Secret, or carry one a shoot must not get (Tenant.ConfigProblem).
	Reserved, Claimed, Orphaned, Unusable int
}

// Count returns the pool's statistics.
func Count(pool []Tenant) Stats {
	var s Stats
	for _, t := range pool {
		switch {
		case t.Orphaned || t.State == StateOrphaned || t.State == StatePendingDelete:
			s.Orphaned++
		case t.AssignedTo != "":
			s.Claimed++
		case t.ReservedFor != "":
			s.Reserved++
		case !t.Usable() || !t.State.Approved():
			s.Unusable++
		default:
			s.Free++
		}
	}
	return s
}
