package ports

import (
	"context"
	"errors"
	"time"

	"github.com/kyma-project/kim/core/domain/registrycache"
)

// ErrFieldOwnedByOthers: a server-side apply found the field owned by another field manager with another value
// (e.g. KEB sends spec.imageRegistryCache itself). Nothing was written; the operator never forces.
var ErrFieldOwnedByOthers = errors.New("field is managed by another field manager")

// ErrCopyConflict: a Secret of the Gardener project already has the name of a copy of registry credentials but is
// not that copy (other labels, data or mutability): someone placed it there first. It is never referenced.
var ErrCopyConflict = errors.New("a Secret of that name exists and is not the operator's copy")

// String renders the reference as namespace/runtimeID.
func (r RuntimeRef) String() string { return r.Namespace + "/" + r.RuntimeID }

// RegistryCacheRuntime is what the registry cache sync needs to know about a Runtime.
type RegistryCacheRuntime struct {
	// Exists is false when there is no Runtime of that name; Deleting when it is being deleted.
	Exists, Deleting bool
	ShootName        string
	// Provisioned is status.provisioningCompleted: the runtime's API server can be asked.
	Provisioned bool
	// Entries are spec.imageRegistryCache as stored.
	Entries []registrycache.Entry
	// Managed is true when the operator's field manager owns spec.imageRegistryCache (it wrote the entries).
	Managed bool
}

// RegistryCacheRuntimes reads Runtimes and writes their spec.imageRegistryCache in the KCP.
type RegistryCacheRuntimes interface {
	// Get observes the Runtime (a cached read). Whether the customer enabled the module is not the KCP's to say
	// (RegistryCacheSource.ModuleEnabled asks the runtime). A missing Runtime is not an error (Exists false).
	// Errors wrap ErrTransient.
	Get(ctx context.Context, ref RuntimeRef) (RegistryCacheRuntime, error)
	// ApplyEntries makes spec.imageRegistryCache equal entries by server-side apply with the operator's own field
	// manager (operator/api/v1.FieldManagerRegistryCache), never forcing: fields owned by others (KEB's) are never
	// changed, and an empty list removes the field when only the operator owned it. Idempotent. Errors:
	// ErrFieldOwnedByOthers (another manager owns the field), ErrTransient, and the API server's rejection.
	ApplyEntries(ctx context.Context, ref RuntimeRef, entries []registrycache.Entry) error
}

// RegistryCacheSource reads the customer's RegistryCacheConfig objects and their credentials in a runtime and
// reports their status back. Every call blocks for requests to the runtime's API server (through its kubeconfig).
type RegistryCacheSource interface {
	// Configs lists the RegistryCacheConfig objects of all namespaces with their current status. A runtime without
	// the RegistryCacheConfig CRD has none (not an error). Errors wrap ErrRuntimeUnreachable or ErrTransient, or
	// are a *registrycache.OverLimit when the objects exceed the source's registrycache.Limits (more objects, more
	// pages or more bytes than allowed): the configs returned with it are those read until then (never more than
	// MaxConfigs), only to report the limit on; they are not the runtime's objects.
	Configs(ctx context.Context, runtimeID string) ([]registrycache.Config, error)
	// ModuleEnabled tells whether the customer enabled the registry-cache module: the runtime's own Kyma resource
	// (registrycache.KymaNamespace/registrycache.KymaName) lists it in spec.modules. lifecycle-manager's copy in
	// the KCP holds only the default modules, so it is never asked. A runtime without the Kyma CRD has the module
	// disabled (false, no error). A failed read is an error, never "disabled", and so is a missing Kyma resource
	// where its CRD exists: lifecycle-manager syncs both, and reading a gap as "disabled" would remove the
	// customer's caches. A Kyma resource larger than the source's Limits.MaxListBytes is a *registrycache.OverLimit
	// (ReasonKymaTooLarge). Blocks for at most two requests to the runtime. Errors wrap ErrRuntimeUnreachable or
	// ErrTransient.
	ModuleEnabled(ctx context.Context, runtimeID string) (bool, error)
	// Credentials reads a Secret. A missing Secret is Found false, not an error. The data is the customer's
	// credentials: implementations never log it. Errors wrap ErrRuntimeUnreachable or ErrTransient.
	Credentials(ctx context.Context, runtimeID string, key registrycache.Key) (registrycache.Credentials, error)
	// SetStatus writes status.state and the RegistryCacheConfigured condition of the object (its transition time
	// now when the condition's status changes), preconditioned on the observed generation (a config changed
	// meanwhile is left for the next sync: ErrConflict). A missing object is not an error (it was deleted
	// meanwhile). Errors also: ErrRuntimeUnreachable, ErrTransient.
	SetStatus(ctx context.Context, runtimeID string, c registrycache.Config, st registrycache.Status, now time.Time) error
}

// RegistryCacheGarden keeps the copies of registry credentials in the Gardener project and tells what a shoot holds.
type RegistryCacheGarden interface {
	// EnsureSecret creates the immutable copy (created true). An existing Secret of that name is read back and
	// accepted only when it is exactly that copy (the operator's labels for the same runtime and cache, immutable,
	// the same data: the name is the content's hash); otherwise ErrCopyConflict. Errors also wrap ErrTransient.
	EnsureSecret(ctx context.Context, s registrycache.GardenSecret) (created bool, err error)
	// DeleteSecret deletes a copy; names without registrycache.SecretPrefix are refused (an error), a missing one
	// is no error. Errors wrap ErrTransient.
	DeleteSecret(ctx context.Context, name string) error
	// Shoot observes the registry caches of a shoot. A missing shoot is ShootView{Exists: false}. ReadCached may
	// lag behind a write; ReadLive asks the garden (used before deleting a copy). Errors wrap ErrTransient.
	Shoot(ctx context.Context, shootName string, mode ReadMode) (registrycache.ShootView, error)
}

// RegistryCredentialOwners confirms which Secrets of the Gardener project are copies of registry credentials made
// for a runtime; the Runtime controller lets a registry cache reference only those.
type RegistryCredentialOwners interface {
	// OwnedCopies returns those of names that exist as reg-cache-* Secrets labelled as the operator's copies for
	// runtimeID (read by name, metadata only). Other names are left out, never read. Errors wrap ErrTransient.
	OwnedCopies(ctx context.Context, runtimeID string, names []string) ([]string, error)
}

// RegistryCacheLedger records in the KCP the names of the garden copies made for each runtime. The operator neither
// lists nor watches Secrets of the Gardener project (they hold the cloud credentials and RBAC cannot limit a list
// to some of them), so this record is how it finds its copies again, to delete them by name.
type RegistryCacheLedger interface {
	// Copies returns the copies recorded for the runtime (Name, RuntimeID and ShootName; never data). A runtime
	// without a record has none. ReadCached answers from the KCP cache, which lags behind Record and Forget (a name
	// just recorded may be missing, one just forgotten still there): enough to see that nothing is to be collected,
	// never to delete a copy or to skip recording one. Errors wrap ErrTransient.
	Copies(ctx context.Context, ref RuntimeRef, mode ReadMode) ([]registrycache.GardenSecret, error)
	// Record adds copies to the runtime's record. It is called before the copies are created, so no crash leaves
	// a copy nobody knows of. Idempotent. Errors wrap ErrTransient.
	Record(ctx context.Context, ref RuntimeRef, copies []registrycache.GardenSecret) error
	// Forget removes names from the record (their copies were deleted, or the name is not the operator's copy); a
	// record left empty is removed. Errors wrap ErrTransient.
	Forget(ctx context.Context, ref RuntimeRef, names []string) error
	// Runtimes lists the runtime IDs with a record in namespace, for the sweep that collects the copies of
	// runtimes deleted while the operator was down. Errors wrap ErrTransient.
	Runtimes(ctx context.Context, namespace string) ([]string, error)
}

// UpstreamResolver tells whether a registry host name resolves.
type UpstreamResolver interface {
	// Resolve returns "" when host resolves, or why not (for the customer's condition). It blocks for at most a
	// few seconds. An error means the resolver itself failed (not the host): the check is skipped then.
	Resolve(ctx context.Context, host string) (string, error)
}
