package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
)

// GuardState is the persistent state that can stop deletions: the emergency brake people set and the circuit
// breaker's ledger.
type GuardState struct {
	// Frozen is the emergency brake (set by people, read by the operator; no restart needed). It is true also when
	// the stored value is not one the operator understands (BrakeInvalid).
	Frozen bool
	// BrakeInvalid is the stored brake value when deletion.ParseBrake refused it ("" otherwise).
	BrakeInvalid string
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

// DeletionRecords keeps the operator's own record of every Runtime deletion in the KCP (deletion.KCPRecord), next
// to the record on the shoot that people with write access to the garden project can edit. Only the operator
// writes them. A record is stored in the Runtime's namespace under the shoot's name: a shoot name is unique in the
// garden project, and a runtime ID can come back with another shoot.
type DeletionRecords interface {
	// Get returns the record of the deletion of shootName in namespace; found is false when there is none (not an
	// error).
	// ReadCached may lag behind a write; a cached miss is confirmed live (a miss makes a shoot wait, it must not
	// come from a cache that has not synced). Errors wrap ErrTransient.
	Get(ctx context.Context, namespace, shootName string, mode ReadMode) (rec deletion.KCPRecord, found bool, err error)
	// Put stores r (created, or replacing the record of the same shoot name in the namespace). Errors wrap ErrTransient; an incomplete
	// record (deletion.KCPRecord.Validate) is refused with that error.
	Put(ctx context.Context, r deletion.KCPRecord) error
	// RemoveForShoot removes every record about shootName whose shoot UID is not keepUID (keepUID "" removes all of
	// them): the shoot they were about is gone. It reads the records from the cache. Errors wrap ErrTransient.
	RemoveForShoot(ctx context.Context, shootName, keepUID string) error
	// Withdraw removes the records about the shoot object shootUID named shootName in every watched namespace,
	// read live: its deletion was taken back, and a record of a deletion that no longer exists must never back a
	// record someone writes on the shoot later. Records about another UID stay; none is no error. Errors wrap
	// ErrTransient.
	Withdraw(ctx context.Context, shootName, shootUID string) error
	// ForShoot returns the records about shootName in every watched namespace (from the cache; a lagging cache
	// may miss one written a moment ago). Errors wrap ErrTransient.
	ForShoot(ctx context.Context, shootName string) ([]deletion.KCPRecord, error)
	// Migrated tells whether the one-time migration of deletions recorded only on shoots (operator versions
	// before the KCP records) is done. Errors wrap ErrTransient.
	Migrated(ctx context.Context) (bool, error)
	// SetMigrated records that the migration is done, at. Idempotent. Errors wrap ErrTransient.
	SetMigrated(ctx context.Context, at time.Time) error
}
