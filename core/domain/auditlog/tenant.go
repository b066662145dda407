// Package auditlog decides about dedicated audit log tenants: the landscape keeps a pool of pre-provisioned
// tenants (AuditLog resources in the KCP); a runtime with auditLogAccessEnabled reserves a free one (a label naming
// it) and then claims it (spec.assignedToRuntimeID), both with optimistic locking, so no tenant ever serves two
// runtimes. Reservations a crash left behind are recovered; a tenant is released (orphaned for the landscape's
// cleanup, never handed to another runtime) only when its runtime and the runtime's cluster are both gone. It is
// pure: the use cases observe and act.
package auditlog

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// State is status.state of an AuditLog, written by the landscape's audit log manager (KALM) only.
type State string

// States of an AuditLog (the enum of its CRD).
const (
	StatePending            State = "Pending"
	StateRegistrationReady  State = "RegistrationReady"
	StateSiemApproved       State = "SiemApproved"
	StateAssigned           State = "Assigned"
	StateOrphaned           State = "Orphaned"
	StatePendingDelete      State = "PendingDelete"
	StateUnrecoverableError State = "UnrecoverableError"
)

// Approved reports whether a tenant in state s may be handed to a runtime: the audit log manager provisioned it
// (RegistrationReady) or the SIEM team approved it (SiemApproved), as the previous infrastructure manager accepts.
func (s State) Approved() bool { return s == StateSiemApproved || s == StateRegistrationReady }

// Tenant is one AuditLog resource of the pool as the operator observed it. Field for field it is the audit log
// manager's resource; the operator writes only AssignedTo, the reservation labels and Orphaned.
type Tenant struct {
	// Name identifies it: <namespace>/<name>.
	Name string
	// Version is its resourceVersion: every write is preconditioned on the version the decision was taken on.
	Version string
	// State is status.state.
	State State
	// AssignedTo is spec.assignedToRuntimeID: the runtime that claimed it ("" while free). Immutable once set.
	AssignedTo string
	// ReservedFor is the reserved-for-runtime-id label: a runtime that started to claim it.
	ReservedFor string
	// ReservedAt is the reserved-for-runtime-at label (unix seconds; zero: unknown).
	ReservedAt time.Time
	// Orphaned is spec.orphaned: the tenant was released; it is never claimed again (one-way).
	Orphaned bool
	// Regions is spec.regions: the hyperscaler regions the tenant serves.
	Regions []string
	// TenantID is spec.subaccountID and ServiceURL spec.config.serviceURL: the tenant in the audit log service.
	TenantID, ServiceURL string
	// SecretName is spec.config.gardenerSecretName: the tenant's write credentials Secret in the Gardener project.
	SecretName string
	// ReadCredentials is spec.config.readCredsSecretName, in the pool's namespace: the Secret (in the KCP) with the
	// credentials the customer reads the logs with.
	ReadCredentials SecretRef
}

// SecretRef names a Secret.
type SecretRef struct{ Namespace, Name string }

// Usable reports whether the tenant carries what a shoot needs, and nothing a shoot must not get: without its own
// write credentials a dedicated tenant cannot receive logs (the shared tenant's Secret would authenticate
// elsewhere), and values that fail ConfigProblem never reach a shoot.
func (t Tenant) Usable() bool {
	return t.TenantID != "" && t.ServiceURL != "" && t.SecretName != "" && t.ConfigProblem() == ""
}

// Serves reports whether the tenant serves the hyperscaler region.
func (t Tenant) Serves(region string) bool { return slices.Contains(t.Regions, region) }

// Free reports whether a runtime of region may reserve the tenant: approved, neither assigned, reserved nor
// orphaned, usable, and serving the region.
func (t Tenant) Free(region string) bool {
	return t.State.Approved() && t.AssignedTo == "" && t.ReservedFor == "" && !t.Orphaned && t.Usable() && t.Serves(region)
}

// Request is a runtime asking for its tenant.
type Request struct {
	// RuntimeID and Region (the shoot's hyperscaler region) of the runtime.
	RuntimeID, Region string
	// Existing: the runtime's cluster exists already. It is then claimed at once (reservation and assignment in one
	// write), as the previous infrastructure manager does for a runtime switched to a dedicated tenant later.
	Existing bool
	// Enabled is spec.auditLogAccessEnabled. A runtime that holds a tenant keeps it when Enabled turns false
	// (switching on is one-way).
	Enabled bool
}

// Action is the one write a claim decision asks for.
type Action string

// Claim actions.
const (
	// ActionNone: nothing to write; Tenant (if set) is the runtime's, Wait says why there is none.
	ActionNone Action = ""
	// ActionReserve sets the reservation label on Tenant, preconditioned on its version.
	ActionReserve Action = "Reserve"
	// ActionClaim sets spec.assignedToRuntimeID on Tenant, preconditioned on its version, and the reservation
	// labels too when Tenant is not reserved for the runtime yet (an existing runtime claims at once).
	ActionClaim Action = "Claim"
	// ActionUnreserve removes the runtime's reservation of Tenant: it holds another tenant already (Claimed), or
	// Tenant is no longer one it may get.
	ActionUnreserve Action = "Unreserve"
)

// Decision is the next step of a claim.
type Decision struct {
	Action Action
	Tenant Tenant
	// Claimed is set when the runtime holds Tenant (Action is then ActionNone or ActionUnreserve of a stray one).
	Claimed *Tenant
	// PoolEmpty is set when the runtime needs a tenant and none is free.
	PoolEmpty bool
}

// DecideClaim returns the next step for req on the pool. It is applied repeatedly (each write changes the pool)
// until it returns ActionNone: the runtime then holds Claimed, waits (PoolEmpty) or does not want a tenant.
func DecideClaim(req Request, pool []Tenant) Decision {
	var claimed *Tenant
	for i := range pool {
		if t := pool[i]; t.AssignedTo == req.RuntimeID && !t.Orphaned {
			if claimed == nil || t.Name < claimed.Name { // two claims cannot happen; be deterministic if they did
				claimed = &pool[i]
			}
		}
	}
	for _, t := range pool {
		// A reservation next to a claim is left from an interrupted claim: give it back.
		if claimed != nil && t.ReservedFor == req.RuntimeID && t.AssignedTo == "" {
			return Decision{Action: ActionUnreserve, Tenant: t, Claimed: claimed}
		}
	}
	if claimed != nil {
		return Decision{Claimed: claimed}
	}
	if !req.Enabled {
		return Decision{}
	}
	for _, t := range pool {
		if t.ReservedFor != req.RuntimeID || t.AssignedTo != "" || t.Orphaned {
			continue
		}
		unreserved := t
		unreserved.ReservedFor = ""
		if !unreserved.Free(req.Region) {
			// The audit log manager withdrew it (or it no longer serves the region) since it was reserved: give it
			// back rather than claim a tenant nobody may get.
			return Decision{Action: ActionUnreserve, Tenant: t}
		}
		return Decision{Action: ActionClaim, Tenant: t} // resume a claim a crash interrupted
	}
	free := freeTenants(pool, req.Region)
	if len(free) == 0 {
		return Decision{PoolEmpty: true}
	}
	pick := free[spread(req.RuntimeID, len(free))]
	if req.Existing {
		return Decision{Action: ActionClaim, Tenant: pick}
	}
	return Decision{Action: ActionReserve, Tenant: pick}
}

// freeTenants returns the free tenants in name order (the order the API server lists a namespace in, so the
// choice does not depend on who listed).
func freeTenants(pool []Tenant, region string) []Tenant {
	var out []Tenant
	for _, t := range pool {
		if t.Free(region) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// spread picks a start index from the runtime ID, so concurrent claimers mostly try different tenants instead of
// all racing for the first free one.
func spread(runtimeID string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runtimeID))
	return int(h.Sum32() % uint32(n)) //nolint:gosec // n > 0 is a small pool size
}
