package ports

import (
	"context"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// RuntimeBootstrap is what one Runtime records that the rollout of the bootstrap manifests in waves needs.
type RuntimeBootstrap struct {
	Namespace string
	// RuntimeID is the Runtime's name.
	RuntimeID string
	// ShootName is spec.shoot.name (a hibernated shoot pauses its runtime).
	ShootName string
	// Bootstrap is the set last attempted inside the runtime (status.runtimeConfiguration.bootstrapHash,
	// bootstrapFailed).
	Bootstrap runtimeconfig.BootstrapRecord
	// EverReady is status.provisioningCompleted: the runtime was Ready once.
	EverReady bool
	// Deleting is true once the Runtime has a deletion timestamp; GaveUp while its status.state is Failed (the
	// operator does not configure it until something changes).
	Deleting, GaveUp bool
}

// RuntimeBootstrapLister lists the Runtimes for the rollout of the bootstrap manifests.
type RuntimeBootstrapLister interface {
	// ListBootstrap returns one entry per Runtime of the watched namespaces, in no particular order. It reads the
	// manager's cache (it lags behind status writes by the cache's delay, and sends nothing to the API server), so a
	// walk over 5,000 Runtimes costs no request; an empty list is not an error. Errors wrap ErrTransient (the cache
	// cannot be read, e.g. it has not synced yet).
	ListBootstrap(ctx context.Context) ([]RuntimeBootstrap, error)
}
