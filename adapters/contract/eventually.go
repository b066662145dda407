package contract

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// patience is how long a suite waits for a real adapter's cache to show a write (fakes pass at once); tick is how
// often it looks.
const (
	patience = 30 * time.Second
	tick     = 20 * time.Millisecond
)

// eventually retries cond until its assertions hold (testify's EventuallyWithT: checked at once, then every 20 ms)
// and fails the test with the last failures after the patience ran out.
func eventually(t *testing.T, what string, cond func(c *assert.CollectT)) {
	t.Helper()
	require.EventuallyWithT(t, cond, patience, tick, what)
}

// UntilNoConflict calls write again while it reports ports.ErrConflict, as the use cases do on their next pass: a
// real garden writes the shoot meanwhile (the simulated gardenlet reports an operation's progress every second and
// retries its own conflicts at once), and a port may answer ErrConflict for that. How many attempts that takes
// depends on the machine's load (on a loaded one a read and its write span one of the gardenlet's), so it retries for
// the suite's patience, 200 ms apart, and returns the last error with the number of attempts.
// The integration tests of the real adapters use it for such writes of their own (an adoption).
func UntilNoConflict[T any](write func() (T, error)) (T, error) {
	return retryConflicts(patience, 200*time.Millisecond, write)
}

// retryConflicts calls write until it reports no ports.ErrConflict or timeout has passed, interval apart.
func retryConflicts[T any](timeout, interval time.Duration, write func() (T, error)) (T, error) {
	deadline := time.Now().Add(timeout)
	for attempt := 1; ; attempt++ {
		v, err := write()
		if !errors.Is(err, ports.ErrConflict) {
			return v, err
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("still conflicting after %d attempts in %s: %w", attempt, timeout, err)
		}
		time.Sleep(interval)
	}
}
