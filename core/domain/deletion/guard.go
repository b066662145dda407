package deletion

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Budget is the deletion circuit breaker's limit: at most Limit shoot deletions within any period Per. Beyond it
// the breaker trips and stays tripped until a person resets it: a burst of deletions is a bug or an attack until a
// person says otherwise.
type Budget struct {
	Limit int
	Per   time.Duration
}

// DefaultBudget is the breaker sized for a landscape of 10,000 runtimes.
func DefaultBudget() Budget { return Budget{Limit: DefaultBudgetLimit, Per: DefaultBudgetPer} }

// Validate reports a budget that cannot work.
func (b Budget) Validate() error {
	if b.Limit < 1 || b.Per <= 0 {
		return fmt.Errorf("deletion budget %d per %s: the limit must be at least 1 and the period positive", b.Limit, b.Per)
	}
	return nil
}

// Ledger is the persistent record of the breaker: the recent deletions and whether it tripped. It lives outside
// the operator's memory (a restart must not reset the count).
type Ledger struct {
	// Deletions are the moments deletions were started (reserved), any order.
	Deletions []time.Time
	// TrippedAt is set when the breaker refused a deletion; only a person clears it.
	TrippedAt time.Time
}

// ErrBudgetExhausted is returned by Reserve when the breaker refuses a deletion (or is tripped already).
var ErrBudgetExhausted = errors.New("deletion circuit breaker: budget exhausted")

// Reserve decides whether one more deletion may start at now. It returns the ledger to store: with the deletion
// added, or tripped. Entries older than the period are dropped, so the ledger stays small.
func (b Budget) Reserve(l Ledger, now time.Time) (Ledger, error) {
	out := Ledger{TrippedAt: l.TrippedAt}
	for _, t := range l.Deletions {
		if now.Sub(t) < b.Per { // a moment ahead of now (the clock went back) still counts: conservative
			out.Deletions = append(out.Deletions, t)
		}
	}
	slices.SortFunc(out.Deletions, func(a, b time.Time) int { return a.Compare(b) })
	if !out.TrippedAt.IsZero() {
		return out, fmt.Errorf("%w: tripped at %s; a person must reset it", ErrBudgetExhausted, out.TrippedAt.UTC().Format(time.RFC3339))
	}
	if len(out.Deletions) >= b.Limit {
		out.TrippedAt = now
		return out, fmt.Errorf("%w: %d deletions within %s (limit %d); a person must reset it", ErrBudgetExhausted, len(out.Deletions), b.Per, b.Limit)
	}
	out.Deletions = append(out.Deletions, now)
	return out, nil
}

// Used counts the deletions of the ledger within the period before now.
func (b Budget) Used(l Ledger, now time.Time) int {
	n := 0
	for _, t := range l.Deletions {
		if now.Sub(t) < b.Per {
			n++
		}
	}
	return n
}

// Guard is the dynamic state that can stop deletions without a restart. Any of its stops wins over every
// window: no shoot is deleted or force-deleted while one holds.
type Guard struct {
	// Frozen is the emergency brake (a watched ConfigMap key or the static configuration).
	Frozen bool
	// BrakeInvalid is the brake's value when it is neither "true" nor "false" (nor absent): deletions stop until a
	// person writes a value the operator understands (see ParseBrake).
	BrakeInvalid string
	// Tripped is true while the circuit breaker is tripped.
	Tripped bool
	// ClockAhead is how far the operator's clock runs ahead of the API server's (negative: behind).
	ClockAhead time.Duration
	// ClockUnknown is true when the API server's time could not be read: deletions wait until it can.
	ClockUnknown bool
}

// Stop is why deletions are stopped now ("" when they are not).
type Stop string

// The reasons deletions stop.
const (
	StopNone        Stop = ""
	StopBrake       Stop = "EmergencyBrake"
	StopBrakeValue  Stop = "EmergencyBrakeInvalid"
	StopBreaker     Stop = "CircuitBreakerTripped"
	StopClockAhead  Stop = "ClockAhead"
	StopClockUnsure Stop = "ClockUnknown"
)

// Stopped tells whether and why deletions are stopped.
func (g Guard) Stopped(p Policy) (Stop, string) {
	switch {
	case g.BrakeInvalid != "":
		return StopBrakeValue, fmt.Sprintf("the emergency brake has the value %q, which is neither %q nor %q; deletions stay stopped until a person fixes it",
			g.BrakeInvalid, BrakeOn, BrakeOff)
	case g.Frozen || p.Frozen:
		return StopBrake, "deletions are frozen (emergency brake)"
	case g.Tripped:
		return StopBreaker, "the deletion circuit breaker tripped; a person must reset it"
	case g.ClockUnknown:
		return StopClockUnsure, "the API server's time could not be read to check the operator's clock"
	case g.ClockAhead > p.ClockTolerance():
		return StopClockAhead, fmt.Sprintf("the operator's clock runs %s ahead of the API server's (tolerance %s)",
			g.ClockAhead.Round(time.Second), p.ClockTolerance())
	}
	return StopNone, ""
}

// The values of the emergency brake people write (the key "frozen" of the deletion guard ConfigMap).
const (
	BrakeOn  = "true"
	BrakeOff = "false"
)

// ErrBrakeValue is returned by ParseBrake for a value other than BrakeOn, BrakeOff or nothing.
var ErrBrakeValue = errors.New("unknown emergency brake value")

// ParseBrake reads the emergency brake a person wrote. Only "true" stops deletions and only "false" or nothing
// lets them run (surrounding white space is ignored). Anything else ("yes", "1", "True", "flase") is refused with
// ErrBrakeValue, and the brake counts as on: a person who meant to stop deletions must not be ignored because of
// a typo, and a person who meant to lift the brake learns why it still holds.
func ParseBrake(value string) (frozen bool, err error) {
	switch v := strings.TrimSpace(value); v {
	case BrakeOn:
		return true, nil
	case BrakeOff, "":
		return false, nil
	default:
		return true, fmt.Errorf("%w %q: only %q (stop deletions) or %q (let them run) are accepted", ErrBrakeValue, v, BrakeOn, BrakeOff)
	}
}
