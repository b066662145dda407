package contract

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// ServerClockFixture is a server clock and the true time of its server.
type ServerClockFixture struct {
	Clock ports.ServerClock
	// Now is the server's true time; Tolerance how far an answer may be from it (the Date header has seconds).
	Now       func() time.Time
	Tolerance time.Duration
	// Unreachable is a clock whose server does not answer.
	Unreachable ports.ServerClock
}

// RunServerClockContract runs the ServerClock contract against fixtures made by newFixture.
func RunServerClockContract(t *testing.T, newFixture func(t *testing.T) ServerClockFixture) {
	t.Run("the server's time, within the tolerance, also when asked again", func(t *testing.T) {
		f := newFixture(t)
		for range 3 {
			got, err := f.Clock.ServerNow(t.Context())
			require.NoError(t, err)
			require.WithinDuration(t, f.Now(), got, f.Tolerance)
		}
	})
	t.Run("a server that does not answer is a transient error", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Unreachable.ServerNow(t.Context())
		require.True(t, errors.Is(err, ports.ErrTransient), "ServerNow of an unreachable server: %v", err)
	})
}
