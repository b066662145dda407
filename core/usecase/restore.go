package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// ErrNoRestoreDocument: the shoot carries no record of its Runtime (marked by an older operator, too large to be
// recorded, or edited). The runtime can still be brought back by creating the Runtime with the same ID by hand.
var ErrNoRestoreDocument = errors.New("shoot has no recorded Runtime to restore")

// Restorer brings back the Runtime of a shoot waiting for deletion (`kim restore`, or the reaper acting on the
// restore request on the shoot). The Runtime controller then sees a Runtime with the recorded ID and takes the
// cluster back.
type Restorer struct {
	Shoots   ports.Shoots
	Runtimes ports.RuntimeRegistry
	Policy   deletion.Policy
	// DefaultNamespace is where a Runtime goes back when the record does not name its namespace (records of older
	// operator versions).
	DefaultNamespace string
}

// RestorePlan describes what a restore does (or, with dryRun, would do).
type RestorePlan struct {
	Shoot, RuntimeID, Namespace string
	// DueAt is when the shoot would have been deleted.
	DueAt time.Time
}

// Restore validates that the shoot can be restored and its record describes exactly the runtime that was deleted,
// then marks the shoot for restore (so the reaper cannot delete it meanwhile) and re-creates the Runtime. With
// dryRun it only validates (the API server validates the Runtime too) and writes nothing.
func (r *Restorer) Restore(ctx context.Context, shootName string, now time.Time, dryRun bool) (RestorePlan, error) {
	s, err := r.Shoots.Get(ctx, shootName, ports.ReadLive)
	if err != nil {
		return RestorePlan{}, fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	if err := deletion.Restorable(s, r.Policy, now); err != nil {
		return RestorePlan{}, fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	if _, err := r.recreate(ctx, s, true); err != nil || dryRun {
		return r.plan(s), err
	}
	if err := r.Shoots.RequestRestore(ctx, shootName); err != nil {
		return RestorePlan{}, fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	return r.recreate(ctx, s, false)
}

func (r *Restorer) plan(s shootstate.Shoot) RestorePlan {
	pd := s.Marks.PendingDeletion
	ns := pd.RuntimeNamespace
	if ns == "" {
		ns = r.DefaultNamespace
	}
	return RestorePlan{Shoot: s.Name, RuntimeID: pd.RuntimeID, Namespace: ns, DueAt: r.Policy.EffectiveDue(*pd)}
}

// recreate creates the recorded Runtime of s (a shoot pending deletion), or only validates it with dryRun.
func (r *Restorer) recreate(ctx context.Context, s shootstate.Shoot, dryRun bool) (RestorePlan, error) {
	if s.Marks.PendingDeletion == nil {
		return RestorePlan{}, fmt.Errorf("restore shoot %s: %w", s.Name, deletion.ErrNotPendingDeletion)
	}
	plan := r.plan(s)
	doc, err := r.Shoots.RestoreSpec(ctx, s.Name)
	if err != nil {
		return plan, fmt.Errorf("restore shoot %s: %w", s.Name, err)
	}
	if len(doc) == 0 {
		return plan, fmt.Errorf("restore shoot %s: %w; create Runtime %s with the same spec by hand", s.Name, ErrNoRestoreDocument, plan.RuntimeID)
	}
	req := ports.RestoreRequest{Document: doc, RuntimeID: plan.RuntimeID, Namespace: plan.Namespace, ShootName: s.Name}
	if err := r.Runtimes.Recreate(ctx, req, dryRun); err != nil {
		return plan, fmt.Errorf("restore shoot %s: %w", s.Name, err)
	}
	return plan, nil
}
