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

// Tenant is one AuditLog resource of the pool as the operator observed it.
type Tenant struct {
	// Name identifies it: <namespace>/<name> for a namespaced pool, <name> for a cluster-scoped one.
	Name string
	// Version is its resourceVersion: every write is preconditioned on the version the decision was taken on.
	Version string
	// AssignedTo is spec.assignedToRuntimeID: the runtime that claimed it ("" while free).
	AssignedTo string
	// ReservedFor is the reserved-for-runtime-id label: a runtime that started to claim it.
	ReservedFor string
	// ReservedAt is when the reservation was made (zero: unknown).
	ReservedAt time.Time
	// Orphaned is set once the tenant was released; it is never claimed again.
	Orphaned bool
	// ShootName is the shoot of the runtime recorded at the claim (to tell when the cluster is gone).
	ShootName string
	// Provider and Region restrict which runtimes may use it; empty: any.
	Provider, Region string
	// TenantID and ServiceURL locate the tenant in the audit log service; without both it cannot be used.
	TenantID, ServiceURL string
	// SecretName is the tenant's write credentials Secret in the Gardener project; empty: the shared one.
	SecretName string
	// ReadCredentials names the Secret (in the KCP) with the credentials the customer reads the logs with.
	ReadCredentials SecretRef
}

// SecretRef names a Secret.
type SecretRef struct{ Namespace, Name string }

// Usable reports whether the tenant carries what a shoot needs.
func (t Tenant) Usable() bool { return t.TenantID != "" && t.ServiceURL != "" }

// Free reports whether a runtime of provider and region may reserve the tenant.
func (t Tenant) Free(provider, region string) bool {
	return t.AssignedTo == "" && t.ReservedFor == "" && !t.Orphaned && t.Usable() &&
		(t.Provider == "" || strings.EqualFold(t.Provider, provider)) && (t.Region == "" || t.Region == region)
}

// Request is a runtime asking for its tenant.
type Request struct {
	RuntimeID, ShootName, Provider, Region string
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
	// ActionClaim sets spec.assignedToRuntimeID on Tenant, reserved for the runtime, preconditioned on its version.
	ActionClaim Action = "Claim"
	// ActionUnreserve removes the runtime's reservation of Tenant (it holds another tenant already).
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
		if t.ReservedFor == req.RuntimeID && t.AssignedTo == "" && !t.Orphaned {
			return Decision{Action: ActionClaim, Tenant: t} // resume a claim a crash interrupted
		}
	}
	free := freeTenants(pool, req.Provider, req.Region)
	if len(free) == 0 {
		return Decision{PoolEmpty: true}
	}
	return Decision{Action: ActionReserve, Tenant: free[spread(req.RuntimeID, len(free))]}
}

// freeTenants returns the free tenants in name order.
func freeTenants(pool []Tenant, provider, region string) []Tenant {
	var out []Tenant
	for _, t := range pool {
		if t.Free(provider, region) {
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
