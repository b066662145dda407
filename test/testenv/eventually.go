package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Eventually is the project's one polling helper for tests: testify's EventuallyWithT around a condition that also
// describes what it saw, so a timeout says what the test was waiting for and what it saw last. It checks at once,
// then every 100 ms.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, seen string)) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ok, seen := cond()
		assert.True(c, ok, "last seen: %s", seen)
	}, timeout, 100*time.Millisecond, "waiting for %s", what)
}

// Poll is Eventually for commands (the sandbox, the load harness): it calls cond every interval until it says
// done, returns an error naming what and the last description after timeout, and reports progress every 15 s.
func Poll(ctx context.Context, timeout, interval time.Duration, what string, cond func() (done bool, seen string),
	progress func(what, seen string)) error {
	deadline := time.Now().Add(timeout)
	lastReport := time.Now()
	for {
		done, seen := cond()
		if done {
			return nil
		}
		if progress != nil && time.Since(lastReport) > 15*time.Second {
			progress(what, seen)
			lastReport = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not done after %s: %s", what, timeout, seen)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
