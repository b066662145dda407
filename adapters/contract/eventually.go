package contract

import (
	"errors"
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

// untilNoConflict calls write again while it reports ports.ErrConflict, as the use cases do on their next pass: a
// real garden writes the shoot meanwhile (the simulated gardenlet reports a running hibernation every half second),
// and a port may answer ErrConflict for that. Ten attempts, 200 ms apart; the last error is returned.
func untilNoConflict[T any](write func() (T, error)) (T, error) {
	var v T
	var err error
	for range 10 {
		if v, err = write(); !errors.Is(err, ports.ErrConflict) {
			return v, err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return v, err
}
