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

// Reaper deletes the shoots of deleted runtimes after their window, forces stuck deletions Gardener allows it
// for, and restores shoots a person asked to restore. It is the only code path that deletes a shoot.
type Reaper struct {
	Shoots   ports.Shoots
	Runtimes ports.RuntimeRegistry
	// Records are the KCP's records of the deletions (written by Teardown); a shoot is reaped only with one that
	// matches its own record.
	Records ports.DeletionRecords
	// Namespace is where the records of shoot records without a runtime namespace (older operator versions) are
	// looked up.
	Namespace string
	Guard     ports.DeletionGuard
	Clock     ports.ServerClock
	Restorer  *Restorer
	Policy    deletion.Policy
	// Bindings, when set, leaves the credentials binding of a reaped shoot as KEB's deprovisioning step leaves it
	// when the shoot disappears (docs/adr/0005); nil: bindings are not touched.
	Bindings ports.CredentialsBindings
}

// ReapResult is the decision taken about one shoot and what happened.
type ReapResult struct {
	Decision deletion.ReapDecision
	// Shoot is the last observation (for gauges and logs).
	Shoot  shootstate.Shoot
	Events []Event
	// Deleted is true when a deletion was started; Restored when the Runtime was re-created.
	Deleted, Restored bool
}

// Reap decides about one shoot at now (the operator's clock) and acts. Cached observations only ever lead to
// waiting or to a live confirmation; a deletion happens only after the shoot was re-read from the garden, the KCP
// confirmed that no Runtime with the recorded ID exists, the API server's clock agreed with ours, the circuit
// breaker granted it, and then only with the confirmed shoot's UID and resourceVersion as preconditions.
func (r *Reaper) Reap(ctx context.Context, name string, now time.Time) (ReapResult, error) {
	s, err := r.Shoots.Get(ctx, name, ports.ReadCached)
	if err != nil {
		return ReapResult{}, err
	}
	in := deletion.ReapInput{Shoot: s}
	if !s.Exists {
		return ReapResult{Decision: deletion.Reap(in, r.Policy, now), Shoot: s}, r.forget(ctx, name, now)
	}
	// Only a shoot with a deletion record can be acted on (deletion.Reap ignores the others whatever the guard
	// says): the shoot events of runtimes being provisioned cost no read of the guard (a live one while no guard
	// ConfigMap exists).
	if pd := s.Marks.PendingDeletion; pd != nil {
		if in.Guard, err = r.guard(ctx); err != nil {
			return ReapResult{Shoot: s}, err
		}
		if in.Record, err = r.record(ctx, name, *pd, ports.ReadCached); err != nil {
			return ReapResult{Shoot: s}, err
		}
	}
	d := deletion.Reap(in, r.Policy, now)
	var serverNow time.Time
	if d.Action == deletion.ReapConfirm {
		if in, serverNow, err = r.confirm(ctx, name, in.Guard, now); err != nil {
			return ReapResult{Shoot: s}, err
		}
		d = deletion.Reap(in, r.Policy, now)
	}
	res := ReapResult{Decision: d, Shoot: in.Shoot}
	pre := ports.Precondition{UID: in.Shoot.UID, ResourceVersion: in.Shoot.ResourceVersion}
	switch d.Action {
	case deletion.ReapDelete:
		// The breaker counts in the API server's time: a jump of the operator's clock must not age its ledger.
		stop, err := r.reserve(ctx, name, serverNow)
		if err != nil {
			return res, err
		}
		if stop.Stop != deletion.StopNone {
			res.Decision = stop
			reason := EventDeletionStopped
			if stop.Stop == deletion.StopBreaker {
				reason = EventBreakerTripped
			}
			res.Events = append(res.Events, Event{Warning: true, Reason: reason, Message: stop.Message})
			return res, nil
		}
		if err := r.Shoots.Delete(ctx, name, pre); err != nil {
			return res, fmt.Errorf("delete shoot %s: %w", name, err)
		}
		res.Deleted = true
		res.Events = append(res.Events, Event{Reason: EventShootDeleted, Message: d.Message})
	case deletion.ReapForceDelete:
		if err := r.Shoots.ForceDelete(ctx, name, pre); err != nil {
			return res, fmt.Errorf("force-delete shoot %s: %w", name, err)
		}
		res.Events = append(res.Events, Event{Warning: true, Reason: EventShootForceDeleted, Message: d.Message})
	case deletion.ReapRestore:
		if _, err := r.Restorer.recreate(ctx, in.Shoot, false); err != nil {
			return res, fmt.Errorf("restore shoot %s: %w", name, err)
		}
		res.Restored = true
		res.Events = append(res.Events, Event{Reason: EventRestoreStarted, Message: d.Message})
	case deletion.ReapNone:
		switch {
		case d.Step == deletion.StepWaitWindow && in.Record != nil:
			again, events, err := r.endBindingHold(ctx, name, *in.Record, now)
			res.Events = append(res.Events, events...)
			if err != nil {
				return res, err
			}
			if again > 0 && again < res.Decision.RequeueAfter {
				res.Decision.RequeueAfter = again
			}
		case d.Step == deletion.StepInvalidRecord:
			res.Events = append(res.Events, Event{Warning: true, Reason: EventInvalidDeletionRecord, Message: d.Message})
		case d.Step == deletion.StepUnbacked:
			res.Events = append(res.Events, Event{Warning: true, Reason: d.Reason, Message: d.Message})
		case d.Stop == deletion.StopBrakeValue:
			res.Events = append(res.Events, Event{Warning: true, Reason: EventBrakeInvalid, Message: d.Message})
		}
	}
	return res, nil
}

// guard reads the brake and the breaker from the cache: enough to decide to wait.
func (r *Reaper) guard(ctx context.Context) (deletion.Guard, error) {
	st, err := r.Guard.Load(ctx, ports.ReadCached)
	if err != nil {
		return deletion.Guard{}, fmt.Errorf("read the deletion guard: %w", err)
	}
	return deletion.Guard{Frozen: st.Frozen, BrakeInvalid: st.BrakeInvalid, Tripped: !st.Ledger.TrippedAt.IsZero()}, nil
}

// record reads the KCP's record of the deletion of shoot name in the namespace the shoot's record pd names (nil
// when there is none). Which record it is, is decided by the shoot's name, not by what the record on it says.
func (r *Reaper) record(ctx context.Context, name string, pd shootstate.PendingDeletion, mode ports.ReadMode) (*deletion.KCPRecord, error) {
	if pd.RuntimeID == "" {
		return nil, nil
	}
	ns := pd.RuntimeNamespace
	if ns == "" {
		ns = r.Namespace
	}
	rec, found, err := r.Records.Get(ctx, ns, name, mode)
	if err != nil {
		return nil, fmt.Errorf("read the KCP's deletion record of runtime %s: %w", pd.RuntimeID, err)
	}
	if !found {
		return nil, nil
	}
	return &rec, nil
}

// forget removes the KCP's records about a shoot that is gone, after a live read confirmed it: the records are
// only needed while the shoot exists.
func (r *Reaper) forget(ctx context.Context, name string, now time.Time) error {
	s, err := r.Shoots.Get(ctx, name, ports.ReadLive)
	if err != nil {
		return fmt.Errorf("confirm shoot %s is gone: %w", name, err)
	}
	keep := ""
	if s.Exists {
		keep = s.UID // created again meanwhile: only the records of the old shoot go
	}
	if err := r.finishBindings(ctx, name, keep, now); err != nil {
		return err
	}
	if err := r.Records.RemoveForShoot(ctx, name, keep); err != nil {
		return fmt.Errorf("remove the KCP's deletion records of shoot %s: %w", name, err)
	}
	return nil
}

// finishBindings leaves the credentials binding of every deletion of shoot name (except of the shoot uid keep)
// exactly as KEB's step would have left it had it waited for the shoot to disappear: dirty when no shoot names it
// any more, and without the operator's dirty label when another shoot does. It runs before the records go, so a
// failure is retried with the next event of the shoot.
func (r *Reaper) finishBindings(ctx context.Context, name, keep string, now time.Time) error {
	if r.Bindings == nil {
		return nil
	}
	recs, err := r.Records.ForShoot(ctx, name)
	if err != nil {
		return fmt.Errorf("read the KCP's deletion records of shoot %s: %w", name, err)
	}
	for _, rec := range recs {
		if rec.CredentialsBinding == "" || rec.BindingRelease == deletion.BindingUntouched || (keep != "" && rec.ShootUID == keep) {
			continue
		}
		if err := r.finishBinding(ctx, name, rec, now); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reaper) finishBinding(ctx context.Context, name string, rec deletion.KCPRecord, now time.Time) error {
	now, err := r.gardenNow(ctx, now)
	if err != nil {
		return fmt.Errorf("read the garden's time before releasing credentials binding %s of shoot %s: %w", rec.CredentialsBinding, name, err)
	}
	for range 5 {
		b, err := r.Bindings.Get(ctx, rec.CredentialsBinding)
		if err != nil {
			return fmt.Errorf("read credentials binding %s of shoot %s: %w", rec.CredentialsBinding, name, err)
		}
		o, err := bindingUsers(ctx, r.Shoots, r.Bindings, r.Records, r.Policy, name, b)
		if err != nil {
			return err
		}
		d := deletion.OnShootGone(o, rec.BindingRelease, now)
		switch d.Step {
		case deletion.BindingLabelDirty:
			err = r.Bindings.SetDirty(ctx, rec.CredentialsBinding, b.ResourceVersion)
		case deletion.BindingRemoveDirty:
			err = r.Bindings.RemoveDirty(ctx, rec.CredentialsBinding, b.ResourceVersion)
		default:
			return nil
		}
		if errors.Is(err, ports.ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("release credentials binding %s of shoot %s: %w", rec.CredentialsBinding, name, err)
		}
		return nil
	}
	return fmt.Errorf("release credentials binding %s of shoot %s: %w: it kept changing", rec.CredentialsBinding, name, ports.ErrConflict)
}

// confirm re-reads the shoot live, asks the KCP whether the recorded runtime exists and compares the clocks. It
// returns the API server's time (zero when it could not be read: the guard then stops the deletion).
func (r *Reaper) confirm(ctx context.Context, name string, g deletion.Guard, now time.Time) (deletion.ReapInput, time.Time, error) {
	s, err := r.Shoots.Get(ctx, name, ports.ReadLive)
	if err != nil {
		return deletion.ReapInput{}, time.Time{}, fmt.Errorf("confirm shoot %s: %w", name, err)
	}
	in := deletion.ReapInput{Shoot: s, Guard: g}
	if pd := s.Marks.PendingDeletion; pd != nil && pd.RuntimeID != "" {
		exists, err := r.Runtimes.Claims(ctx, pd.RuntimeID, name)
		if err != nil {
			return deletion.ReapInput{}, time.Time{}, fmt.Errorf("confirm runtime %s is gone: %w", pd.RuntimeID, err)
		}
		in.RuntimeExists = &exists
		if in.Record, err = r.record(ctx, name, *pd, ports.ReadLive); err != nil {
			return deletion.ReapInput{}, time.Time{}, err
		}
	}
	server, err := r.Clock.ServerNow(ctx)
	if err != nil {
		in.Guard.ClockUnknown = true
		return in, time.Time{}, nil
	}
	in.Guard.ClockAhead = now.Sub(server)
	return in, server, nil
}

// reserve takes one deletion from the circuit breaker's budget, with optimistic locking on the stored ledger so
// concurrent reapers (or replicas) cannot exceed it together. A refusal is returned as a frozen decision.
func (r *Reaper) reserve(ctx context.Context, name string, now time.Time) (deletion.ReapDecision, error) {
	budget := r.Policy.Budget
	if budget == (deletion.Budget{}) {
		budget = deletion.DefaultBudget()
	}
	stopped := func(stop deletion.Stop, why string) deletion.ReapDecision {
		return deletion.ReapDecision{Step: deletion.StepFrozen, Stop: stop, RequeueAfter: deletion.FrozenRecheck,
			Message: fmt.Sprintf("Shoot %s is due but kept: %s.", name, why)}
	}
	for range 5 {
		st, err := r.Guard.Load(ctx, ports.ReadLive)
		if err != nil {
			return deletion.ReapDecision{}, fmt.Errorf("read the deletion ledger: %w", err)
		}
		if st.Frozen {
			return stopped(deletion.StopBrake, "the emergency brake was set meanwhile"), nil
		}
		if !st.Ledger.TrippedAt.IsZero() {
			return stopped(deletion.StopBreaker, "the deletion circuit breaker tripped meanwhile; a person must reset it"), nil
		}
		next, refused := budget.Reserve(st.Ledger, now)
		err = r.Guard.StoreLedger(ctx, next, st.Version)
		if errors.Is(err, ports.ErrConflict) {
			continue
		}
		if err != nil {
			return deletion.ReapDecision{}, fmt.Errorf("record the deletion of shoot %s in the ledger: %w", name, err)
		}
		if refused != nil {
			return stopped(deletion.StopBreaker, refused.Error()), nil
		}
		return deletion.ReapDecision{}, nil
	}
	return deletion.ReapDecision{}, fmt.Errorf("record the deletion of shoot %s in the ledger: %w: too many concurrent writers", name, ports.ErrConflict)
}

// MigrateRecords is the one-time migration to KCP records: every shoot marked by an operator version that did not
// write them gets one (deletion.Policy.MigrationRecord: a full window from now, never earlier than the shoot's
// record), then the migration is recorded as done. It runs once, at the first start of this version, before any
// shoot record can have been forged against it: afterwards a shoot record without a KCP record is never reaped
// (StepUnbacked) and a person resolves it. It returns how many records it wrote. Idempotent until done; an error
// leaves the migration to be run again.
func (r *Reaper) MigrateRecords(ctx context.Context, shoots ports.ShootLister, now time.Time) (int, error) {
	done, err := r.Records.Migrated(ctx)
	if err != nil || done {
		return 0, err
	}
	list, err := shoots.ListManaged(ctx)
	if err != nil {
		return 0, fmt.Errorf("list the shoots to migrate their deletion records: %w", err)
	}
	n := 0
	for _, s := range list {
		pd := s.Marks.PendingDeletion
		if pd == nil || pd.RuntimeID == "" || s.UID == "" {
			continue
		}
		existing, err := r.record(ctx, s.Name, *pd, ports.ReadLive)
		if err != nil {
			return n, err
		}
		if existing != nil {
			continue
		}
		rec := r.Policy.MigrationRecord(s, *pd, now)
		if rec.RuntimeNamespace == "" {
			rec.RuntimeNamespace = r.Namespace
		}
		if err := r.Records.Put(ctx, rec); err != nil {
			return n, fmt.Errorf("migrate the deletion record of shoot %s: %w", s.Name, err)
		}
		n++
	}
	if err := r.Records.SetMigrated(ctx, now); err != nil {
		return n, fmt.Errorf("record the migration of deletion records as done: %w", err)
	}
	return n, nil
}
