package deletion

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// KCPRecord is the deletion of a Runtime as the operator recorded it in the KCP when it let the Runtime go. The
// shoot's own record (shootstate.PendingDeletion) lives in annotations anyone who can write shoots in the garden
// project can forge; the KCP record is written only by the operator (its own resource, its own RBAC). The reaper
// deletes a shoot only when both records agree on the shoot (UID) and the runtime, and never before the later of
// their due times.
type KCPRecord struct {
	// RuntimeID and RuntimeNamespace name the deleted Runtime (the record is stored under them).
	RuntimeID, RuntimeNamespace string
	// ShootName and ShootUID name the one shoot object this deletion is about: a shoot created again under the
	// name has another UID and is not covered.
	ShootName, ShootUID string
	// MarkedAt is when the operator let the Runtime go; DueAt is the earliest moment the shoot may be deleted.
	MarkedAt, DueAt time.Time
	// CredentialsBinding is the binding the Runtime named (spec.shoot.secretBindingName) and BindingRelease what
	// the operator did to it for this deletion: the restore and the reaper undo or complete exactly that.
	CredentialsBinding string
	BindingRelease     BindingRelease
}

// Validate reports a record that cannot be stored: every field is needed to match it against a shoot.
func (r KCPRecord) Validate() error {
	if r.RuntimeID == "" || r.RuntimeNamespace == "" || r.ShootName == "" || r.ShootUID == "" || r.MarkedAt.IsZero() || r.DueAt.IsZero() {
		return fmt.Errorf("incomplete KCP deletion record %+v: runtime ID and namespace, shoot name and UID, mark and due time are required", r)
	}
	return nil
}

// Reasons a shoot record is not backed by the KCP. They are stable: metrics, events and runbooks name them.
const (
	// ReasonNoKCPRecord: the shoot carries a deletion record but the KCP holds none for its runtime. Either the
	// shoot record was forged (or restored from an old backup of the garden), or the deletion predates the KCP
	// records and the one-time migration did not run yet.
	ReasonNoKCPRecord = "NoKCPDeletionRecord"
	// ReasonKCPRecordMismatch: the KCP record of the runtime is about another shoot (name or UID).
	ReasonKCPRecordMismatch = "KCPDeletionRecordMismatch"
)

// ErrNoKCPRecord and ErrKCPRecordMismatch are what CheckKCPRecord returns.
var (
	ErrNoKCPRecord       = errors.New(ReasonNoKCPRecord)
	ErrKCPRecordMismatch = errors.New(ReasonKCPRecordMismatch)
)

// CheckKCPRecord tells whether the KCP record kcp backs the deletion record pd on shoot s: it exists, it names the
// same runtime, and it is about this very shoot (name and UID).
func CheckKCPRecord(s shootstate.Shoot, pd shootstate.PendingDeletion, kcp *KCPRecord) error {
	switch {
	case kcp == nil:
		return fmt.Errorf("%w: the KCP holds no deletion record of runtime %s", ErrNoKCPRecord, pd.RuntimeID)
	case kcp.RuntimeID != pd.RuntimeID:
		return fmt.Errorf("%w: the KCP record names runtime %s, the shoot's names %s", ErrKCPRecordMismatch, kcp.RuntimeID, pd.RuntimeID)
	case kcp.ShootName != s.Name || kcp.ShootUID == "" || kcp.ShootUID != s.UID:
		return fmt.Errorf("%w: the KCP record of runtime %s is about shoot %s (uid %s), not %s (uid %s)", ErrKCPRecordMismatch,
			kcp.RuntimeID, kcp.ShootName, kcp.ShootUID, s.Name, s.UID)
	case kcp.MarkedAt.IsZero() || kcp.DueAt.IsZero():
		return fmt.Errorf("%w: the KCP record of runtime %s has no mark or due time", ErrKCPRecordMismatch, kcp.RuntimeID)
	}
	return nil
}

// Due is when a shoot recorded in both places may be deleted: the later of the shoot record's effective due time
// and the KCP record's (each capped by the data-privacy limit from its own mark). A forged shoot record can so
// never bring a deletion forward; it can only postpone it, which its author could do anyway by removing the mark.
func (p Policy) Due(pd shootstate.PendingDeletion, kcp KCPRecord) time.Time {
	due := p.EffectiveDue(pd)
	kcpDue := kcp.DueAt
	if p.MaxWindow > 0 {
		if limit := kcp.MarkedAt.Add(p.MaxWindow); limit.Before(kcpDue) {
			kcpDue = limit
		}
	}
	if kcpDue.After(due) {
		return kcpDue
	}
	return due
}

// MigrationRecord is the KCP record the one-time migration writes for a shoot that was marked by an operator
// version without KCP records: due no earlier than the shoot's record says, and no earlier than a full window
// (the longer of the recorded one and the plan's) from now, because the shoot record cannot be trusted on its own.
func (p Policy) MigrationRecord(s shootstate.Shoot, pd shootstate.PendingDeletion, now time.Time) KCPRecord {
	window := p.capped(max(pd.Window, p.Window(pd.Plan)))
	due := now.Add(window)
	if pd.DueAt.After(due) {
		due = pd.DueAt
	}
	return KCPRecord{RuntimeID: pd.RuntimeID, RuntimeNamespace: pd.RuntimeNamespace, ShootName: s.Name, ShootUID: s.UID,
		MarkedAt: now, DueAt: due}
}
