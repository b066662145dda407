package ports

import (
	"context"
	"errors"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/shoot"
)

// Errors of Shoots, in addition to ErrShootNotFound and ErrTransient (kubeconfig.go). Implementations wrap one of
// them with the garden's own message, so callers branch with errors.Is and show what Gardener said.
var (
	// ErrShootRejected: the garden refused the shoot as invalid or forbidden (admission, validation, quota
	// objects). Repeating the same request cannot succeed; the spec or the configuration must change.
	ErrShootRejected = errors.New("shoot rejected by the garden")
	// ErrShootNotManaged: the shoot exists but does not carry the operator's marks; the operator never changes it.
	ErrShootNotManaged = errors.New("shoot not managed by this operator")
)

// ShootApply is one desired state of a runtime's shoot.
type ShootApply struct {
	Spec shoot.Spec
	// RuntimeID owns the shoot; RuntimeGeneration is the Runtime generation Spec was generated from.
	RuntimeID         string
	RuntimeGeneration int64
	// SpecHash identifies Spec (see SpecHash in the lifecycle controller); it is recorded on the shoot.
	SpecHash string
}

// DeletionMark is what is recorded on a shoot when its Runtime is deleted.
type DeletionMark struct {
	Record cluster.PendingDeletion
	// Hibernate requests hibernation in the same change.
	Hibernate bool
	// RestoreSpec is an opaque document from which the Runtime can be recreated (the CR as JSON).
	RestoreSpec []byte
}

// Shoots reads and changes the shoots of the operator's Gardener project. Every method blocks for at most a few
// requests to the garden; none waits for Gardener to act on a change (that arrives later, by watch).
type Shoots interface {
	// Get returns the observed shoot. A missing shoot is not an error: it returns cluster.Shoot{Exists: false}.
	// It may answer from a cache that lags behind recent writes by a moment.
	Get(ctx context.Context, name string) (cluster.Shoot, error)
	// Current returns what shoot.GenerateUpdate needs of an existing shoot; nil (and no error) when it is missing.
	Current(ctx context.Context, name string) (*shoot.Current, error)
	// Apply creates the shoot or updates the fields the operator owns (server-side apply with the operator's own
	// field manager), removes worker pools missing from the spec even when another manager touched them, writes
	// any ConfigMap the spec references first, and records the marks (managed-by, runtime ID and generation, spec
	// hash) in the same write. Idempotent: applying the same spec again changes nothing in Gardener.
	// Errors: ErrShootRejected, ErrShootNotManaged (an existing shoot without the operator's marks), ErrTransient.
	// Returns the shoot as the garden stored it.
	Apply(ctx context.Context, a ShootApply) (cluster.Shoot, error)
	// InSync reports whether the shoot already holds everything Apply(a) would write: every value the spec and the
	// marks set (values others added are ignored) and no worker pool outside the spec. A missing or foreign shoot
	// is not in sync. It may answer from the same lagging cache as Get and sends nothing to the garden.
	InSync(ctx context.Context, a ShootApply) (bool, error)
	// RequestRetry asks Gardener to retry the failed last operation (gardener.cloud/operation=retry) and records
	// attempt and at. Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	RequestRetry(ctx context.Context, name string, attempt int, at time.Time) (cluster.Shoot, error)
	// MarkForDeletion records m on the shoot (and requests hibernation if asked) in a single change. Idempotent.
	// Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	MarkForDeletion(ctx context.Context, name string, m DeletionMark) (cluster.Shoot, error)
	// CancelDeletion removes the pending-deletion record and the restore request, wakes the shoot (hibernation off)
	// and records runtimeID as the owner. Idempotent. Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	CancelDeletion(ctx context.Context, name, runtimeID string) (cluster.Shoot, error)
	// Adopt puts the operator's managed-by mark on a shoot that carries runtimeID in its runtime-id annotation but
	// not the mark: a shoot the system the operator replaces created for that runtime. Nothing else changes.
	// Idempotent. Errors: ErrShootNotFound, ErrShootNotManaged (the annotation names another runtime or none),
	// ErrTransient.
	Adopt(ctx context.Context, name, runtimeID string) (cluster.Shoot, error)
	// RestoreSpec returns the document recorded by MarkForDeletion. Errors: ErrShootNotFound, ErrShootNotManaged,
	// ErrTransient; a shoot without a record returns an empty document.
	RestoreSpec(ctx context.Context, name string) ([]byte, error)
	// RequestRestore sets the restore request on a shoot pending deletion; the reaper then restores it.
	// Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	RequestRestore(ctx context.Context, name string) error
	// Delete sets Gardener's deletion confirmation and deletes the shoot. Deleting a missing shoot succeeds; a shoot
	// without the operator's marks is refused with ErrShootNotManaged. It does not wait until the shoot is gone.
	Delete(ctx context.Context, name string) error
	// ForceDelete sets Gardener's force-deletion confirmation on a shoot being deleted. Gardener accepts it only
	// for certain error codes (ErrShootRejected otherwise). Errors also: ErrShootNotFound, ErrShootNotManaged.
	ForceDelete(ctx context.Context, name string) error
}

// Seeds tells where Gardener can place control planes.
type Seeds interface {
	// SeedAvailable reports whether at least one seed for provider in region is ready and accepts new shoots.
	// Read only; errors wrap ErrTransient.
	SeedAvailable(ctx context.Context, provider, region string) (bool, error)
}
