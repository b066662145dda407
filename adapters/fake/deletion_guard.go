package fake

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// DeletionGuard is an in-memory ports.DeletionGuard with a version for optimistic locking. Safe for concurrent
// use.
type DeletionGuard struct {
	mu      sync.Mutex
	state   ports.GuardState
	version int
	// Err, when set, is consulted first by every method (by name); a non-nil error is returned as is.
	Err func(method string) error
}

var _ ports.DeletionGuard = (*DeletionGuard)(nil)

// Load implements ports.DeletionGuard (the fake's cache never lags).
func (g *DeletionGuard) Load(_ context.Context, _ ports.ReadMode) (ports.GuardState, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Err != nil {
		if err := g.Err("Load"); err != nil {
			return ports.GuardState{}, err
		}
	}
	st := g.state
	st.Ledger.Deletions = slices.Clone(st.Ledger.Deletions)
	st.Version = g.versionString()
	return st, nil
}

// StoreLedger implements ports.DeletionGuard.
func (g *DeletionGuard) StoreLedger(_ context.Context, l deletion.Ledger, version string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Err != nil {
		if err := g.Err("StoreLedger"); err != nil {
			return err
		}
	}
	if version != g.versionString() {
		return fmt.Errorf("store deletion ledger: %w", ports.ErrConflict)
	}
	g.state.Ledger = deletion.Ledger{Deletions: slices.Clone(l.Deletions), TrippedAt: l.TrippedAt}
	g.version++
	return nil
}

// versionString is the stored state's version: "" while nothing was stored, as the port says.
func (g *DeletionGuard) versionString() string {
	if g.version == 0 {
		return ""
	}
	return strconv.Itoa(g.version)
}

// SetFrozen plays a person setting or lifting the emergency brake.
func (g *DeletionGuard) SetFrozen(frozen bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state.Frozen = frozen
	g.version++
}

// ResetBreaker plays a person resetting the tripped circuit breaker (the ledger is kept).
func (g *DeletionGuard) ResetBreaker() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state.Ledger.TrippedAt = time.Time{}
	g.version++
}

// Tripped reports whether the breaker is tripped.
func (g *DeletionGuard) Tripped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.state.Ledger.TrippedAt.IsZero()
}

// ServerClock is a ports.ServerClock that reads a Clock plus an offset (the API server's clock relative to it).
type ServerClock struct {
	mu     sync.Mutex
	Clock  ports.Clock
	offset time.Duration
	// Err, when set, makes ServerNow fail.
	Err error
}

var _ ports.ServerClock = (*ServerClock)(nil)

// ServerNow implements ports.ServerClock.
func (c *ServerClock) ServerNow(context.Context) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err != nil {
		return time.Time{}, c.Err
	}
	return c.Clock.Now().Add(c.offset), nil
}

// SetOffset makes the server's clock run d ahead of Clock (negative: behind).
func (c *ServerClock) SetOffset(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = d
}
