package usecase

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// DefaultRolloutInterval is how old the fleet view of the bootstrap rollout may get: the Runtimes (and, while some
// runtime is waited for, the shoots) are walked at most once per interval, however many reconciles ask.
const DefaultRolloutInterval = 5 * time.Second

// HeldNotifyInterval bounds how often a change of the stop makes every held Runtime be looked at again (their
// Bootstrapped condition names the stop): a failure count that goes back and forth over the threshold costs one
// round over the held runtimes per interval at most.
const HeldNotifyInterval = time.Minute

// RuntimeKey names a Runtime.
type RuntimeKey struct {
	Namespace, Name string
}

// BootstrapRollout rolls a change of the bootstrap manifests out in waves (runtimeconfig.PlanRollout): it derives
// the rollout's state from what the Runtimes record (nothing is stored, so a restart or another replica derives the
// same wave), at most once per Interval, and tells which Runtimes a wave that advanced admits.
type BootstrapRollout struct {
	Runtimes ports.RuntimeBootstrapLister
	// Shoots tells which runtimes are hibernated (no wave waits for them); nil: none is known to be.
	Shoots ports.ShootLister
	// Source is the set being rolled out (Refresh reads it).
	Source ports.BootstrapSource
	Policy runtimeconfig.RolloutPolicy
	// Interval bounds how old the fleet view may get (0: DefaultRolloutInterval).
	Interval time.Duration

	mu   sync.Mutex
	view *fleetView
	// announced is, per set, the rollout the fleet was last told of: the first one computed, then each Refresh's.
	announced map[string]*announcement
}

// fleetView is one walk over the Runtimes, with the rollouts derived from it.
type fleetView struct {
	at       time.Time
	runtimes []ports.RuntimeBootstrap
	// hibernated are the shoots that hibernate or are pending deletion, by name; nil until a rollout needed them.
	hibernated map[string]bool
	plans      map[string]runtimeconfig.Rollout
}

type announcement struct {
	plan runtimeconfig.Rollout
	// heldStopped is the stop the held runtimes were last told of, at heldAt.
	heldStopped bool
	heldAt      time.Time
}

// maxAnnounced bounds the sets remembered (a set changed back and forth).
const maxAnnounced = 8

// RolloutRefresh is the outcome of Refresh.
type RolloutRefresh struct {
	// Plan is the rollout of the current set.
	Plan runtimeconfig.Rollout
	// Enqueue are the Runtimes to look at again: those admitted since the fleet was last told, and, when the stop
	// began or ended, every held one (its condition names the stop).
	Enqueue []RuntimeKey
}

func (r *BootstrapRollout) interval() time.Duration {
	if r.Interval > 0 {
		return r.Interval
	}
	return DefaultRolloutInterval
}

// Plan returns the rollout of the set of that content hash at now, from a fleet view at most Interval old. It
// blocks while the view is refreshed (one walk over the cached Runtimes). Errors wrap what the listers return.
func (r *BootstrapRollout) Plan(ctx context.Context, hash string, now time.Time) (runtimeconfig.Rollout, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.plan(ctx, hash, now)
}

func (r *BootstrapRollout) plan(ctx context.Context, hash string, now time.Time) (runtimeconfig.Rollout, error) {
	if r.Policy.AllAtOnce() {
		return runtimeconfig.PlanRollout(hash, r.Policy, nil), nil // nothing to walk for
	}
	if v := r.view; v == nil || now.Sub(v.at) >= r.interval() || now.Before(v.at) {
		rts, err := r.Runtimes.ListBootstrap(ctx)
		if err != nil {
			return runtimeconfig.Rollout{}, fmt.Errorf("list the runtimes for the bootstrap rollout: %w", err)
		}
		r.view = &fleetView{at: now, runtimes: rts, plans: map[string]runtimeconfig.Rollout{}}
	}
	p, ok := r.view.plans[hash]
	if !ok {
		if err := r.loadHibernated(ctx, hash); err != nil {
			return runtimeconfig.Rollout{}, err
		}
		members := make([]runtimeconfig.RolloutMember, 0, len(r.view.runtimes))
		for _, rt := range r.view.runtimes {
			members = append(members, r.member(rt))
		}
		p = runtimeconfig.PlanRollout(hash, r.Policy, members)
		r.view.plans[hash] = p
	}
	if _, ok := r.announced[hash]; !ok {
		if len(r.announced) >= maxAnnounced {
			r.announced = nil
		}
		if r.announced == nil {
			r.announced = map[string]*announcement{}
		}
		// The first rollout computed for a set is what its first reconciles were told.
		r.announced[hash] = &announcement{plan: p, heldStopped: p.Stopped, heldAt: now}
	}
	return p, nil
}

// loadHibernated walks the shoots once per view, and only when some runtime would be waited for: in between
// rollouts (every runtime tried the set) the shoots are not looked at.
func (r *BootstrapRollout) loadHibernated(ctx context.Context, hash string) error {
	v := r.view
	if v.hibernated != nil || r.Shoots == nil {
		return nil
	}
	needed := false
	for _, rt := range v.runtimes {
		m := r.member(rt)
		needed = needed || (!m.New && !m.Paused && m.Record.Hash != hash)
	}
	if !needed {
		return nil
	}
	shoots, err := r.Shoots.ListManaged(ctx)
	if err != nil {
		return fmt.Errorf("list the shoots for the bootstrap rollout: %w", err)
	}
	v.hibernated = make(map[string]bool, len(shoots))
	for _, s := range shoots {
		if s.HibernationRequested || s.Hibernated || s.Marks.PendingDeletion != nil {
			v.hibernated[s.Name] = true
		}
	}
	return nil
}

func (r *BootstrapRollout) member(rt ports.RuntimeBootstrap) runtimeconfig.RolloutMember {
	return runtimeconfig.RolloutMember{RuntimeID: rt.RuntimeID, Record: rt.Bootstrap, New: !rt.EverReady,
		Paused: rt.Deleting || rt.GaveUp || r.view.hibernated[rt.ShootName]}
}

// Refresh derives the rollout of the current set at now and returns the Runtimes to look at again, for the
// controller to enqueue: when a wave advanced, those it admits (no held runtime is polled); when the stop began or
// ended, every held one, at most once per HeldNotifyInterval. A new set enqueues nothing: every Runtime is looked at
// when the set changes (the manifests are watched) and when the operator starts.
func (r *BootstrapRollout) Refresh(ctx context.Context, now time.Time) (RolloutRefresh, error) {
	b, err := r.Source.Load(ctx)
	if err != nil {
		return RolloutRefresh{}, fmt.Errorf("bootstrap manifests: %w", err)
	}
	hash := b.ContentHash()
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.plan(ctx, hash, now)
	if err != nil || p.AllAtOnce() {
		return RolloutRefresh{Plan: p}, err
	}
	a := r.announced[hash]
	prev := a.plan
	a.plan = p
	notifyHeld := p.Stopped != a.heldStopped && now.Sub(a.heldAt) >= HeldNotifyInterval
	if notifyHeld {
		a.heldStopped, a.heldAt = p.Stopped, now
	}
	out := RolloutRefresh{Plan: p}
	for _, rt := range r.view.runtimes {
		m := r.member(rt)
		admitted := p.Admits(m)
		if admitted && !prev.Admits(m) || !admitted && notifyHeld {
			out.Enqueue = append(out.Enqueue, RuntimeKey{Namespace: rt.Namespace, Name: rt.RuntimeID})
		}
	}
	return out, nil
}
