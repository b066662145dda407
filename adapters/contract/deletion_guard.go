package contract

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// GuardFixture is one fresh deletion guard (nothing stored yet).
type GuardFixture struct {
	Guard ports.DeletionGuard
	// SetFrozen sets the emergency brake as a person does (not through the port).
	SetFrozen func(t *testing.T, frozen bool)
}

// RunDeletionGuardContract runs the DeletionGuard contract against fixtures made by newFixture (one per subtest).
func RunDeletionGuardContract(t *testing.T, newFixture func(t *testing.T) GuardFixture) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	load := func(t *testing.T, f GuardFixture, mode ports.ReadMode) ports.GuardState {
		t.Helper()
		st, err := f.Guard.Load(t.Context(), mode)
		require.NoError(t, err)
		return st
	}

	t.Run("nothing stored is the zero state, not an error", func(t *testing.T) {
		f := newFixture(t)
		for _, mode := range []ports.ReadMode{ports.ReadCached, ports.ReadLive} {
			st := load(t, f, mode)
			require.False(t, st.Frozen)
			require.Empty(t, st.Ledger.Deletions)
			require.True(t, st.Ledger.TrippedAt.IsZero())
			require.Empty(t, st.Version)
		}
	})

	t.Run("the ledger is stored with optimistic locking", func(t *testing.T) {
		f := newFixture(t)
		first := deletion.Ledger{Deletions: []time.Time{at}}
		require.NoError(t, f.Guard.StoreLedger(t.Context(), first, ""))
		st := load(t, f, ports.ReadLive)
		require.Len(t, st.Ledger.Deletions, 1)
		require.True(t, st.Ledger.Deletions[0].Equal(at))
		require.NotEmpty(t, st.Version)
		err := f.Guard.StoreLedger(t.Context(), deletion.Ledger{}, "")
		require.True(t, errors.Is(err, ports.ErrConflict), "a write that expects nothing stored: %v", err)
		second := deletion.Ledger{Deletions: []time.Time{at, at.Add(time.Minute)}, TrippedAt: at.Add(time.Minute)}
		require.NoError(t, f.Guard.StoreLedger(t.Context(), second, st.Version))
		err = f.Guard.StoreLedger(t.Context(), first, st.Version)
		require.True(t, errors.Is(err, ports.ErrConflict), "a write on an old version: %v", err)
		st = load(t, f, ports.ReadLive)
		require.Len(t, st.Ledger.Deletions, 2)
		require.True(t, st.Ledger.TrippedAt.Equal(at.Add(time.Minute)))
		eventually(t, "a cached read catches up", func(c *assert.CollectT) {
			cached, err := f.Guard.Load(t.Context(), ports.ReadCached)
			assert.NoError(c, err)
			assert.Len(c, cached.Ledger.Deletions, 2)
		})
	})

	t.Run("the brake people set is seen, and the ledger never changes it", func(t *testing.T) {
		f := newFixture(t)
		f.SetFrozen(t, true)
		require.True(t, load(t, f, ports.ReadLive).Frozen, "a live read sees the brake at once")
		eventually(t, "a cached read sees the brake", func(c *assert.CollectT) {
			st, err := f.Guard.Load(t.Context(), ports.ReadCached)
			assert.NoError(c, err)
			assert.True(c, st.Frozen)
		})
		st := load(t, f, ports.ReadLive)
		require.NoError(t, f.Guard.StoreLedger(t.Context(), deletion.Ledger{Deletions: []time.Time{at}}, st.Version))
		require.True(t, load(t, f, ports.ReadLive).Frozen, "storing the ledger lifted the brake")
		f.SetFrozen(t, false)
		require.False(t, load(t, f, ports.ReadLive).Frozen)
	})
}
