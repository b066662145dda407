package usecase

// The end of the hold of a deleted runtime's credentials binding (deletion.OnHoldEnd, docs/adr/0005): the reaper,
// while the shoot waits out its window, takes back the dirty label the teardown set once the hold is over and
// another shoot of the tenant still names the binding.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// endBindingHold acts on the binding of the deletion rec of shoot name, whose shoot waits for its window, at now
// (the operator's clock). It returns how soon to look again (0: the hold needs nothing more) and what happened.
// Nothing is written before the hold is over in the garden's time too, and the record is re-read live: the label
// and the record are only changed for the very deletion the reaper is looking at, and only while its runtime is
// not being brought back (the restore takes the label back itself).
func (r *Reaper) endBindingHold(ctx context.Context, name string, rec deletion.KCPRecord, now time.Time) (time.Duration, []Event, error) {
	if r.Bindings == nil || rec.CredentialsBinding == "" || rec.BindingRelease != deletion.BindingReleased {
		return 0, nil, nil
	}
	end := r.Policy.BindingHoldEnd(rec)
	if now.Before(end) {
		return end.Sub(now), nil, nil
	}
	now, err := r.gardenNow(ctx, now)
	if err != nil {
		return 0, nil, fmt.Errorf("read the garden's time before ending the hold of credentials binding %s: %w", rec.CredentialsBinding, err)
	}
	if now.Before(end) {
		return end.Sub(now), nil, nil
	}
	live, found, err := r.Records.Get(ctx, rec.RuntimeNamespace, name, ports.ReadLive)
	if err != nil {
		return 0, nil, fmt.Errorf("read the deletion record of shoot %s before ending the hold of its credentials binding: %w", name, err)
	}
	if !found || live.ShootUID != rec.ShootUID || live.RuntimeID != rec.RuntimeID || live.CredentialsBinding != rec.CredentialsBinding ||
		live.BindingRelease != deletion.BindingReleased {
		return 0, nil, nil // changed meanwhile (a restore, a cache that lagged): the next pass sees the new record
	}
	if back, err := r.Runtimes.Claims(ctx, rec.RuntimeID, name); err != nil || back {
		if err != nil {
			return 0, nil, fmt.Errorf("confirm runtime %s is gone before ending the hold of its credentials binding: %w", rec.RuntimeID, err)
		}
		return 0, nil, nil
	}
	return r.holdEnd(ctx, name, live, now)
}

// gardenNow is the earlier of now (the operator's clock) and the garden's time: an operator clock running ahead
// must not end a hold early.
func (r *Reaper) gardenNow(ctx context.Context, now time.Time) (time.Time, error) {
	if r.Clock == nil {
		return now, nil
	}
	server, err := r.Clock.ServerNow(ctx)
	if err != nil {
		return now, err
	}
	if server.Before(now) {
		return server, nil
	}
	return now, nil
}

// holdEnd runs deletion.OnHoldEnd to its end on the binding of the deletion rec of shoot name.
func (r *Reaper) holdEnd(ctx context.Context, name string, rec deletion.KCPRecord, now time.Time) (time.Duration, []Event, error) {
	var events []Event
	for range 5 {
		b, err := r.Bindings.Get(ctx, rec.CredentialsBinding)
		if err != nil {
			return 0, events, fmt.Errorf("read credentials binding %s of shoot %s at the end of its hold: %w", rec.CredentialsBinding, name, err)
		}
		o := deletion.HoldObservation{Binding: b}
		d := deletion.OnHoldEnd(o, rec.BindingRelease, now)
		if d.Step == deletion.BindingListUsers {
			if o, err = bindingUsers(ctx, r.Shoots, r.Bindings, r.Records, r.Policy, name, b); err != nil {
				return 0, events, err
			}
			d = deletion.OnHoldEnd(o, rec.BindingRelease, now)
		}
		switch d.Step {
		case deletion.BindingWait:
			return d.Until.Sub(now), events, nil
		case deletion.BindingRemoveDirty:
			err := r.Bindings.RemoveDirty(ctx, rec.CredentialsBinding, b.ResourceVersion)
			if errors.Is(err, ports.ErrConflict) {
				continue
			}
			if err != nil {
				return 0, events, fmt.Errorf("remove the dirty label of credentials binding %s of shoot %s: %w", rec.CredentialsBinding, name, err)
			}
			events = append(events, Event{Reason: EventBindingRestored, Message: d.Message})
		}
		if d.Record != rec.BindingRelease {
			rec.BindingRelease = d.Record
			if err := r.Records.Put(ctx, rec); err != nil {
				return 0, events, fmt.Errorf("record the end of the hold of credentials binding %s: %w", rec.CredentialsBinding, err)
			}
		}
		return 0, events, nil
	}
	return 0, events, fmt.Errorf("remove the dirty label of credentials binding %s of shoot %s: %w: it kept changing", rec.CredentialsBinding, name, ports.ErrConflict)
}

// bindingUsers reads live the shoots other than name that name binding b (as KEB's step lists them) and the
// deletions recorded for them: how many wait for no deletion, the latest hold end among those deletions (a record
// without a binding is a teardown that has not decided yet and counts), and which of them hold the operator's
// label on b.
func bindingUsers(ctx context.Context, shoots ports.Shoots, bindings ports.CredentialsBindings, records ports.DeletionRecords,
	policy deletion.Policy, name string, b deletion.Binding) (deletion.HoldObservation, error) {
	users, err := bindings.UsedBy(ctx, b.Name, name)
	if err != nil {
		return deletion.HoldObservation{}, fmt.Errorf("list the shoots using credentials binding %s: %w", b.Name, err)
	}
	o := deletion.HoldObservation{Binding: b, UsersRead: true, OtherUsers: len(users)}
	for _, u := range users {
		recs, err := records.ForShoot(ctx, u)
		if err != nil {
			return deletion.HoldObservation{}, fmt.Errorf("read the deletion records of shoot %s using credentials binding %s: %w", u, b.Name, err)
		}
		s, err := shoots.Get(ctx, u, ports.ReadLive)
		if err != nil {
			return deletion.HoldObservation{}, fmt.Errorf("read shoot %s using credentials binding %s: %w", u, b.Name, err)
		}
		waiting := !s.Exists || s.Deleting() || s.Marks.PendingDeletion != nil
		for _, other := range recs {
			if other.CredentialsBinding != b.Name && other.CredentialsBinding != "" {
				continue
			}
			end := policy.BindingHoldEnd(other)
			if end.After(o.OthersHeldUntil) {
				o.OthersHeldUntil = end
			}
			if other.CredentialsBinding == b.Name && other.BindingRelease.Owned() {
				o.Holders++
				if end.After(o.HoldersHeldUntil) {
					o.HoldersHeldUntil = end
				}
			}
			waiting = waiting || other.ShootUID == s.UID
		}
		if !waiting {
			o.LiveUsers++
		}
	}
	return o, nil
}
