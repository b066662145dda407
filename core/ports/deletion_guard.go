package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
)

// GuardState is the persistent state that can stop deletions: the emergency brake people set and the circuit
// breaker's ledger.
type GuardState struct {
	// Frozen is the emergency brake (set by people, read by the operator; no restart needed).
	Frozen bool
	// Ledger is the breaker's record of recent deletions and whether it tripped.
	Ledger deletion.Ledger
	// Version identifies the stored state for StoreLedger's optimistic locking ("" when nothing is stored yet).
	Version string
}

// DeletionGuard keeps the brake and the breaker's ledger outside the operator's memory, so neither a restart nor a
// second replica can reset them.
type DeletionGuard interface {
	// Load returns the current state. ReadCached may lag behind a write by a moment (enough to decide to wait);
	// reservations read ReadLive. A missing store is the zero state, not an error. Errors wrap ErrTransient.
	Load(ctx context.Context, mode ReadMode) (GuardState, error)
	// StoreLedger writes l if the stored state still has version (ErrConflict otherwise); it never changes the
	// brake. Errors also: ErrTransient.
	StoreLedger(ctx context.Context, l deletion.Ledger, version string) error
}

// ServerClock reads the time of the API server the deletion decisions are about, to notice a local clock that
// runs ahead (which would let windows pass early).
type ServerClock interface {
	// ServerNow returns the API server's current time (one request, or a recent answer remembered with the local
	// time that passed since). Errors wrap ErrTransient.
	ServerNow(ctx context.Context) (time.Time, error)
}
