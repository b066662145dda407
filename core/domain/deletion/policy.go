package deletion

import (
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
)

// Policy is the operator's deletion configuration.
type Policy struct {
	// DefaultWindow is how long a deleted runtime's cluster stays hibernated before it is deleted.
	DefaultWindow time.Duration
	// PlanWindows override DefaultWindow by broker plan name; 0 deletes at once without hibernation (trial, free).
	PlanWindows map[string]time.Duration
	// MaxWindow caps every window, also windows recorded earlier under another configuration: customer data must
	// not be kept longer (data privacy). Zero means no cap.
	MaxWindow time.Duration
	// ForceDeletionAfter is how long a deletion may be stuck on error codes Gardener accepts force-deletion for
	// before the operator sets it. Zero disables force-deletion.
	ForceDeletionAfter time.Duration
	// Frozen is the emergency brake: no shoot is deleted while it is set.
	Frozen bool
}

// Validate reports every inconsistent setting at once.
func (p Policy) Validate() error {
	var errs []error
	if p.DefaultWindow < 0 || p.MaxWindow < 0 || p.ForceDeletionAfter < 0 {
		errs = append(errs, errors.New("deletion windows and force-deletion delay must not be negative"))
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
	return errors.Join(errs...)
}

// Window returns the grace window of a plan: its override or the default, never more than MaxWindow.
func (p Policy) Window(plan string) time.Duration {
	w, ok := p.PlanWindows[plan]
	if !ok {
		w = p.DefaultWindow
	}
	if p.MaxWindow > 0 && w > p.MaxWindow {
		w = p.MaxWindow
	}
	if w < 0 {
		w = 0
	}
	return w
}

// EffectiveDue is when a marked shoot may be deleted: the recorded due time, but never later than MaxWindow after
// the mark, so lowering the maximum also shortens windows already running.
func (p Policy) EffectiveDue(pd cluster.PendingDeletion) time.Time {
	due := pd.DueAt
	if p.MaxWindow > 0 {
		if limit := pd.MarkedAt.Add(p.MaxWindow); limit.Before(due) {
			due = limit
		}
	}
	return due
}
