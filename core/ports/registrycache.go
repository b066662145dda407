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

// String renders the reference as namespace/runtimeID.
func (r RuntimeRef) String() string { return r.Namespace + "/" + r.RuntimeID }

// RegistryCacheRuntime is what the registry cache sync needs to know about a Runtime.
type RegistryCacheRuntime struct {
	// Exists is false when there is no Runtime of that name; Deleting when it is being deleted.
	Exists, Deleting bool
	ShootName        string
	// Provisioned is status.provisioningCompleted: the runtime's API server can be asked.
	Provisioned bool
	// ModuleEnabled is true when the runtime's Kyma resource enables the registry-cache module.
	ModuleEnabled bool
	// Entries are spec.imageRegistryCache as stored.
	Entries []registrycache.Entry
	// Managed is true when the operator's field manager owns spec.imageRegistryCache (it wrote the entries).
	Managed bool
}

// RegistryCacheRuntimes reads Runtimes and writes their spec.imageRegistryCache in the KCP.
type RegistryCacheRuntimes interface {
	// Get observes the Runtime and its Kyma resource (cached reads; a missing Kyma resource or Kyma CRD means the
	// module is not enabled). A missing Runtime is not an error (Exists false). Errors wrap ErrTransient.
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
	// the RegistryCacheConfig CRD has none (not an error). Errors wrap ErrRuntimeUnreachable or ErrTransient.
	Configs(ctx context.Context, runtimeID string) ([]registrycache.Config, error)
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
	// Secrets lists the copies labelled for the runtime (without their data). Errors wrap ErrTransient.
	Secrets(ctx context.Context, runtimeID string) ([]registrycache.GardenSecret, error)
	// EnsureSecret creates the immutable copy; an existing copy of that name is left as it is (the name is the
	// content's hash). Errors wrap ErrTransient.
	EnsureSecret(ctx context.Context, s registrycache.GardenSecret) error
	// DeleteSecret deletes a copy; names without registrycache.SecretPrefix are refused (an error), a missing one
	// is no error. Errors wrap ErrTransient.
	DeleteSecret(ctx context.Context, name string) error
	// Shoot observes the registry caches of a shoot. A missing shoot is ShootView{Exists: false}. ReadCached may
	// lag behind a write; ReadLive asks the garden (used before deleting a copy). Errors wrap ErrTransient.
	Shoot(ctx context.Context, shootName string, mode ReadMode) (registrycache.ShootView, error)
}

// UpstreamResolver tells whether a registry host name resolves.
type UpstreamResolver interface {
	// Resolve returns "" when host resolves, or why not (for the customer's condition). It blocks for at most a
	// few seconds. An error means the resolver itself failed (not the host): the check is skipped then.
	Resolve(ctx context.Context, host string) (string, error)
}
