package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
)

// AuditLogPool is the landscape's pool of dedicated audit log tenants: AuditLog resources
// (auditlogmanager.kyma-project.io/v1beta1) of the audit log manager in the pool's KCP namespace. The operator writes
// only the reservation labels, spec.assignedToRuntimeID and spec.orphaned, never status. Every write is
// preconditioned on the tenant's resourceVersion (auditlog.Tenant.Version): a tenant changed since it was read fails
// with ErrConflict and nothing is written, which is what keeps two runtimes from ever claiming one tenant.
type AuditLogPool interface {
	// List returns every tenant of the pool. ReadCached may lag behind writes (enough to find one's own claim);
	// ReadLive asks the API server (used to decide a reservation). Errors wrap ErrTransient.
	List(ctx context.Context, mode ReadMode) ([]auditlog.Tenant, error)
	// Reserve sets the labels reserved-for-runtime-id (runtimeID) and reserved-for-runtime-at (at, unix seconds)
	// on t, if t still has t.Version. Errors: ErrConflict, ErrTransient. Returns the tenant as stored.
	Reserve(ctx context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error)
	// Claim sets spec.assignedToRuntimeID of t to runtimeID, if t still has t.Version; when t is not reserved for
	// runtimeID the same write sets the reservation labels (recording at), as a claim of an existing runtime does.
	// Errors: ErrConflict, ErrTransient.
	Claim(ctx context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error)
	// Unreserve removes the reservation labels of t (never an assignment), if t still has t.Version. Errors:
	// ErrConflict, ErrTransient.
	Unreserve(ctx context.Context, t auditlog.Tenant) error
	// Release sets spec.orphaned of t (one-way; the audit log manager then keeps the logs for their retention and
	// cleans up), if t still has t.Version; its assignment stays, so it is never handed to another runtime.
	// Errors: ErrConflict, ErrTransient.
	Release(ctx context.Context, t auditlog.Tenant) error
}

// AuditLogOwner is the runtime an AuditLog names, as the KCP knows it.
type AuditLogOwner struct {
	Exists, Enabled bool
	// Provisioned is status.provisioningCompleted: the runtime's API server can be written to.
	Provisioned bool
	ShootName   string
}

// AuditLogRuntimes answers for the Runtimes of the KCP.
type AuditLogRuntimes interface {
	// Lookup asks the API server (not a cache: the answer decides a release) whether a Runtime named runtimeID
	// exists in any watched namespace, with its shoot name and auditLogAccessEnabled. Errors wrap ErrTransient.
	Lookup(ctx context.Context, runtimeID string) (AuditLogOwner, error)
}

// RuntimeSecret is a Secret the operator keeps inside a runtime.
type RuntimeSecret struct {
	Namespace, Name string
	Data            map[string][]byte
}

// KCPSecret is a Secret of the KCP as the audit log keeper judges and copies it.
type KCPSecret struct {
	// Labels carry the pool's opt-in (auditlog.LabelReadCredentials).
	Labels map[string]string
	Data   map[string][]byte
}

// AuditLogCredentials moves the read credentials of a tenant from the KCP into a runtime.
type AuditLogCredentials interface {
	// Read returns the labels and data of a Secret in the KCP (asked live). A missing Secret returns
	// ErrSecretNotFound. The data is a credential: implementations never log it. Errors also: ErrTransient.
	Read(ctx context.Context, ref auditlog.SecretRef) (KCPSecret, error)
}

// RuntimeSecretWriter writes Secrets inside a runtime through its kubeconfig.
type RuntimeSecretWriter interface {
	// EnsureSecret makes the Secret in the runtime hold exactly s.Data (creating its namespace when missing) and
	// reports whether it wrote anything; an equal Secret is not written again. The data is never logged. Errors
	// wrap ErrRuntimeUnreachable or ErrTransient.
	EnsureSecret(ctx context.Context, runtimeID string, s RuntimeSecret) (bool, error)
}
