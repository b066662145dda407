package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// ShootApply is one desired state of a runtime's shoot.
type ShootApply struct {
	Spec shoot.Spec
	// RuntimeID owns the shoot; RuntimeGeneration is the Runtime generation Spec was generated from.
	RuntimeID         string
	RuntimeGeneration int64
	// SpecHash identifies Spec (shoot.Spec.Hash); it is recorded on the shoot.
	SpecHash string
	// Plan is recorded on the shoot (shootstate.Marks.Plan): the plan whose deletion window is the longest the runtime
	// ever had (see deletion.Policy.LongerPlan).
	Plan string
	// Precondition pins an update to the shoot the spec and the marks were computed from: an update computed from
	// a stale observation fails with ErrConflict instead of writing old values back. Empty means the caller observed
	// no shoot: Apply creates one, and finding one is ErrConflict too (the observation was stale).
	Precondition Precondition
	// HoldAdoptedChanges refuses, with ErrAdoptionReviewRequired and without writing, an apply that would change a
	// shoot this operator adopted and never applied (it holds no spec hash of this operator) in its spec or in its
	// structured authentication ConfigMap. Labels and annotations the shoot lacks do not count: they change nothing
	// in the cluster. An adopted shoot that already holds every value is taken over (its marks recorded) as
	// without it.
	HoldAdoptedChanges bool
	// InSyncRecord is the Record of an earlier InSync answer for this shoot that the caller kept (the Runtime's
	// status keeps it across restarts): when the inputs of the comparison are the same, InSync answers from it
	// without comparing the shoot again. Empty: none kept.
	InSyncRecord string
}

// SyncCheck is InSync's answer.
type SyncCheck struct {
	// InSync is true when the shoot holds everything Apply would write.
	InSync bool
	// Record identifies the inputs of the comparison that found the shoot in sync ("" when it is not, or when the
	// inputs cannot be identified): given back as ShootApply.InSyncRecord, the same inputs (the apply, the shoot's
	// UID, generation, labels and annotations, its authentication ConfigMap's version) answer in sync without a
	// comparison, also in another process. Different inputs are compared as if no record was given.
	Record string
}

// DeletionMark is what is recorded on a shoot when its Runtime is deleted.
type DeletionMark struct {
	Record shootstate.PendingDeletion
	// Hibernate requests hibernation in the same change.
	Hibernate bool
	// RestoreSpec is an opaque document from which the Runtime can be recreated (the CR as JSON, without
	// secrets); empty when it is too large to be recorded.
	RestoreSpec []byte
	// Precondition pins the mark to the shoot the decision was taken on.
	Precondition Precondition
}

// ShootReader observes the shoots of the operator's Gardener project.
type ShootReader interface {
	// Get returns the observed shoot. A missing shoot is not an error: it returns shootstate.Shoot{Exists: false}.
	// ReadCached may answer from a cache that lags behind recent writes; ReadLive asks the garden and sets
	// shootstate.Shoot.Live.
	Get(ctx context.Context, name string, mode ReadMode) (shootstate.Shoot, error)
	// Current returns what shoot.GenerateUpdate needs of an existing shoot; nil (and no error) when it is missing.
	// It may answer from the cache.
	Current(ctx context.Context, name string) (*shoot.Current, error)
}

// ShootProvisioner creates, updates and adopts shoots. Every method blocks for at most a few requests to the
// garden; none waits for Gardener to act on a change (that arrives later, by watch).
type ShootProvisioner interface {
	// Apply creates the shoot or updates the fields the operator owns, removes worker pools missing from the spec
	// even when another manager touched them, writes any ConfigMap the spec references first, and records the
	// marks (managed-by, runtime ID and generation, spec hash, plan) in the same write. A new shoot is created
	// with a plain create: a shoot of the same name someone else created meanwhile is never taken over.
	// Idempotent: applying the same spec again changes nothing in Gardener.
	// Errors: ErrShootRejected, ErrShootNotManaged (the observed shoot has no marks of the operator, belongs to
	// another runtime or waits for deletion), ErrConflict (a.Precondition no longer holds; also a shoot found where
	// the caller observed none: a stale view says nothing about ownership, the caller looks again instead of
	// reporting a failure), ErrTransient. Returns the shoot as the garden stored it.
	Apply(ctx context.Context, a ShootApply) (shootstate.Shoot, error)
	// InSync reports whether the shoot already holds everything Apply(a) would write: every value the spec and the
	// marks set (values others added are ignored) and no worker pool outside the spec. A missing or foreign shoot
	// is not in sync. It may answer from the same lagging cache as Get and sends nothing to the garden.
	InSync(ctx context.Context, a ShootApply) (SyncCheck, error)
	// RequestRetry asks Gardener to retry the failed last operation (gardener.cloud/operation=retry) and records
	// attempt and at. Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	RequestRetry(ctx context.Context, name string, attempt int, at time.Time) (shootstate.Shoot, error)
	// Adopt puts the operator's managed-by mark on a shoot that carries runtimeID in its runtime-id annotation but
	// not the mark: a shoot the system the operator replaces created for that runtime (the previous infrastructure
	// manager, or the provisioner before it with its own runtime-id annotation; the operator's annotation is then
	// added). It records plan as the shoot's plan (shootstate.Marks.Plan) unless one is recorded; nothing else changes. It reads the shoot live and
	// returns a live observation. Idempotent. Errors: ErrShootNotFound, ErrShootNotManaged (the annotation names
	// another runtime or none), ErrTransient.
	Adopt(ctx context.Context, name, runtimeID, plan string) (shootstate.Shoot, error)
}

// ShootDeletion records, cancels and executes deletions. Every write re-reads the shoot from the garden and
// writes with optimistic locking, so it never acts on a state older than the one it was decided on.
type ShootDeletion interface {
	// MarkForDeletion records m on the shoot (and requests hibernation if asked) in a single change. Idempotent.
	// Errors: ErrShootNotFound, ErrShootNotManaged, ErrConflict (precondition), ErrTransient.
	MarkForDeletion(ctx context.Context, name string, m DeletionMark) (shootstate.Shoot, error)
	// CancelDeletion removes the pending-deletion record, the restore request and a deletion confirmation left by
	// a failed delete, wakes the shoot (hibernation off), records runtimeID as the owner and plan as the shoot's
	// plan. The caller passes the plan with the longest window of the record, the shoot and the runtime taking the
	// cluster back (deletion.Policy.LongerPlan), computed from the observation pre names: a runtime relabelled
	// after the take-back must not shorten the window it had then. An empty plan keeps the record's plan. It
	// refuses a shoot whose record names another runtime (ErrShootNotManaged). Idempotent. Errors:
	// ErrShootNotFound, ErrShootNotManaged, ErrConflict, ErrTransient.
	CancelDeletion(ctx context.Context, name, runtimeID, plan string, pre Precondition) (shootstate.Shoot, error)
	// RestoreSpec returns the document recorded by MarkForDeletion. Errors: ErrShootNotFound, ErrShootNotManaged,
	// ErrTransient; a shoot without a record returns an empty document.
	RestoreSpec(ctx context.Context, name string) ([]byte, error)
	// RequestRestore sets the restore request on a shoot pending deletion: the reaper restores it instead of
	// deleting it (until the data-privacy limit). Errors: ErrShootNotFound, ErrShootNotManaged, ErrTransient.
	RequestRestore(ctx context.Context, name string) error
	// Delete sets Gardener's deletion confirmation and deletes the shoot, both only if the shoot still has pre's
	// UID and resourceVersion (ErrConflict otherwise). Deleting a missing shoot succeeds; a shoot without the
	// operator's marks is refused with ErrShootNotManaged. It does not wait until the shoot is gone.
	Delete(ctx context.Context, name string, pre Precondition) error
	// ForceDelete sets Gardener's force-deletion confirmation on a shoot being deleted, if it still has pre's UID
	// and resourceVersion. Gardener accepts it only for certain error codes (ErrShootRejected otherwise). Errors
	// also: ErrShootNotFound, ErrShootNotManaged, ErrConflict.
	ForceDelete(ctx context.Context, name string, pre Precondition) error
}

// ShootLister lists the operator's shoots, for the fleet gauges computed when Prometheus scrapes.
type ShootLister interface {
	// ListManaged returns every shoot of the project that carries the operator's managed-by mark, sorted by name.
	// It reads the same lagging cache as ShootReader.Get with ReadCached and sends nothing to the garden; an empty
	// list is not an error. Errors wrap ErrTransient.
	ListManaged(ctx context.Context) ([]shootstate.Shoot, error)
}

// Shoots is every shoot port together, as the Gardener adapter and the fake garden implement them.
type Shoots interface {
	ShootReader
	ShootProvisioner
	ShootDeletion
}

// Seeds tells where Gardener can place control planes.
type Seeds interface {
	// SeedAvailable reports whether at least one seed for provider in region is ready and accepts new shoots.
	// Read only; errors wrap ErrTransient.
	SeedAvailable(ctx context.Context, provider, region string) (bool, error)
	// SeedRegion returns the region of the named seed (the provider region of the seed's cluster); empty, and no
	// error, when no such seed exists. It may answer from a cache of all seeds refreshed every few minutes (seeds do
	// not move). Errors wrap ErrTransient.
	SeedRegion(ctx context.Context, seedName string) (string, error)
}
