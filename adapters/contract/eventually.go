package contract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
