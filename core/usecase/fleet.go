package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// Fleet tells the state of safe deletion over all shoots of the operator, for the gauges computed when Prometheus
// scrapes (one walk over the cached shoots per scrape, not one per event).
type Fleet struct {
	Shoots ports.ShootLister
	Guard  ports.DeletionGuard
	Policy deletion.Policy
}

// GuardReport is the state of the deletion guard.
type GuardReport struct {
	// Brake is the emergency brake (set by people or by the configuration); Tripped the circuit breaker.
	Brake, Tripped bool
	// Used and Limit are the deletions within the breaker's period and how many it allows.
	Used, Limit int
}

// ShootsReport counts the operator's shoots by what waits for them.
type ShootsReport struct {
	// Pending wait for their deletion window; Stuck are being deleted and Gardener reports an error that allows
	// force-deletion; Invalid carry a deletion record that is not trustworthy (kept until a person fixes it);
	// Orphaned are managed shoots without a Runtime and without a deletion record (nothing would delete them).
	Pending, Stuck, Invalid, Orphaned int
}

// GuardState reads the guard from the cache at now.
func (f *Fleet) GuardState(ctx context.Context, now time.Time) (GuardReport, error) {
	st, err := f.Guard.Load(ctx, ports.ReadCached)
	if err != nil {
		return GuardReport{}, fmt.Errorf("read the deletion guard: %w", err)
	}
	budget := f.Policy.Budget
	if budget == (deletion.Budget{}) {
		budget = deletion.DefaultBudget()
	}
	return GuardReport{Brake: st.Frozen || f.Policy.Frozen, Tripped: !st.Ledger.TrippedAt.IsZero(), Used: budget.Used(st.Ledger, now),
		Limit: budget.Limit}, nil
}

// ShootCounts counts the shoots at now; runtimes are the IDs of the Runtimes that exist.
func (f *Fleet) ShootCounts(ctx context.Context, runtimes map[string]bool, now time.Time) (ShootsReport, error) {
	shoots, err := f.Shoots.ListManaged(ctx)
	if err != nil {
		return ShootsReport{}, fmt.Errorf("list shoots: %w", err)
	}
	var r ShootsReport
	for _, s := range shoots {
		pd := s.Marks.PendingDeletion
		switch {
		case pd != nil:
			r.Pending++
			if deletion.CheckRecord(*pd, f.Policy, now) != nil {
				r.Invalid++
			}
			if deletion.Reap(deletion.ReapInput{Shoot: s}, f.Policy, now).Stuck {
				r.Stuck++
			}
		case !s.Deleting() && !runtimes[s.Marks.RuntimeID]:
			r.Orphaned++
		}
	}
	return r, nil
}
