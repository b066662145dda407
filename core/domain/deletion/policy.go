package deletion

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

// Policy is the operator's static deletion configuration. The dynamic part (the emergency brake, the circuit
// breaker, the clock check) is Guard.
type Policy struct {
	// DefaultWindow is how long a deleted runtime's cluster stays hibernated before it is deleted.
	DefaultWindow time.Duration
	// PlanWindows override DefaultWindow by broker plan name; 0 deletes at once without hibernation (trial, free).
	PlanWindows map[string]time.Duration
	// MaxWindow caps every window, also windows recorded earlier under another configuration and windows of
	// shoots whose restore was requested but never completed: customer data must not be kept longer (data
	// privacy). It must be positive: there is no "no cap".
	MaxWindow time.Duration
	// ForceDeletionAfter is how long a deletion may be stuck on error codes Gardener accepts force-deletion for
	// before the operator sets it. Zero disables force-deletion.
	ForceDeletionAfter time.Duration
	// Frozen is the emergency brake set in the static configuration; Guard.Frozen is its dynamic twin.
	Frozen bool
	// Budget is the deletion circuit breaker: at most Budget.Limit deletions per Budget.Per.
	Budget Budget
	// MaxClockAhead is how far the operator's clock may run ahead of the API server's before deletions stop
	// (a clock far ahead would make windows pass early). Zero means DefaultMaxClockAhead.
	MaxClockAhead time.Duration
	// BindingReleaseHold is how long the dirty label the operator put on the credentials binding of a deletion
	// stays when another shoot names the binding (see BindingHold; zero means DefaultBindingReleaseHold).
	BindingReleaseHold time.Duration
}

// Defaults of the dynamic safety settings.
const (
	// DefaultMaxClockAhead tolerates ordinary NTP drift and the one-second resolution of HTTP Date headers.
	DefaultMaxClockAhead = 2 * time.Minute
	// DefaultBudgetLimit is sized for 10,000 runtimes: KEB deletes a few hundred trial runtimes a day at most;
	// a burst above this in one hour is a bug or an attack, not business.
	DefaultBudgetLimit = 100
	// DefaultBudgetPer is the breaker's period.
	DefaultBudgetPer = time.Hour
)

// Validate reports every inconsistent setting at once.
func (p Policy) Validate() error {
	var errs []error
	if p.DefaultWindow < 0 || p.ForceDeletionAfter < 0 || p.MaxClockAhead < 0 || p.BindingReleaseHold < 0 {
		errs = append(errs, errors.New("deletion windows, force-deletion delay, clock tolerance and binding release hold must not be negative"))
	}
	if p.MaxWindow <= 0 {
		errs = append(errs, errors.New("the maximum window must be positive: it is the data-privacy cap and cannot be switched off"))
	}
	if p.MaxWindow > 0 && p.DefaultWindow > p.MaxWindow {
		errs = append(errs, fmt.Errorf("default window %s exceeds the maximum %s", p.DefaultWindow, p.MaxWindow))
	}
	for plan, w := range p.PlanWindows {
		if w < 0 {
			errs = append(errs, fmt.Errorf("window of plan %q must not be negative", plan))
		}
		if p.MaxWindow > 0 && w > p.MaxWindow {
			errs = append(errs, fmt.Errorf("window %s of plan %q exceeds the maximum %s", w, plan, p.MaxWindow))
		}
	}
	if err := p.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Window returns the grace window of a plan: its override or the default, never more than MaxWindow.
func (p Policy) Window(plan string) time.Duration {
	w, ok := p.PlanWindows[plan]
	if !ok {
		w = p.DefaultWindow
	}
	return p.capped(w)
}

func (p Policy) capped(w time.Duration) time.Duration {
	if p.MaxWindow > 0 && w > p.MaxWindow {
		w = p.MaxWindow
	}
	return max(w, 0)
}

// WindowFor returns the window fixed when a Runtime is deleted: the longer of the window of the plan the Runtime
// is labelled with now and of the plan recorded on its shoot at creation. Relabelling a Runtime (by mistake or
// to get rid of a cluster early) can so never shorten the window; an upgrade (free to paid) lengthens it.
func (p Policy) WindowFor(labelPlan, recordedPlan string) (time.Duration, string) {
	w, plan := p.Window(labelPlan), labelPlan
	if recordedPlan != "" && recordedPlan != labelPlan {
		if rw := p.Window(recordedPlan); rw > w {
			w, plan = rw, recordedPlan
		}
	}
	return w, plan
}

// LongerPlan returns the one of two plans with the longer window (a on a tie). The shoot records it on every
// apply, so the recorded plan only ever moves to longer windows.
func (p Policy) LongerPlan(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || p.Window(a) >= p.Window(b):
		return a
	}
	return b
}

// EffectiveDue is when a marked shoot may be deleted: the recorded due time, but never later than MaxWindow after
// the mark, so lowering the maximum also shortens windows already running.
func (p Policy) EffectiveDue(pd shootstate.PendingDeletion) time.Time {
	due := pd.DueAt
	if limit := p.PrivacyLimit(pd); !limit.IsZero() && limit.Before(due) {
		due = limit
	}
	return due
}

// PrivacyLimit is the latest moment the shoot of a deleted runtime may be kept (zero when MaxWindow is unset).
func (p Policy) PrivacyLimit(pd shootstate.PendingDeletion) time.Time {
	if p.MaxWindow <= 0 {
		return time.Time{}
	}
	return pd.MarkedAt.Add(p.MaxWindow)
}

// ClockTolerance is MaxClockAhead or its default.
func (p Policy) ClockTolerance() time.Duration {
	if p.MaxClockAhead > 0 {
		return p.MaxClockAhead
	}
	return DefaultMaxClockAhead
}
