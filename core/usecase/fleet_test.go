package usecase_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// TestFleetCountsWhatWaits: pending, stuck, invalid and orphaned shoots, and the guard, as the gauges report them.
func TestFleetCountsWhatWaits(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := fake.NewClock(now)
	g := fake.NewGarden(clock)
	guard := &fake.DeletionGuard{}
	f := &usecase.Fleet{Shoots: g, Guard: guard, Policy: deletion.Policy{DefaultWindow: time.Hour, MaxWindow: 24 * time.Hour,
		Budget: deletion.Budget{Limit: 3, Per: time.Hour}}}
	apply := func(name, runtimeID string) shootstate.Shoot {
		s, err := g.Apply(t.Context(), ports.ShootApply{Spec: shoot.Spec{Name: name}, RuntimeID: runtimeID})
		require.NoError(t, err)
		return s
	}
	apply("c-live", "rt-live")
	apply("c-orphan", "rt-gone")
	marked := apply("c-marked", "rt-deleted")
	_, err := g.MarkForDeletion(t.Context(), "c-marked", ports.DeletionMark{Precondition: ports.Precondition{UID: marked.UID},
		Record: shootstate.PendingDeletion{RuntimeID: "rt-deleted", MarkedAt: now, DueAt: now.Add(time.Hour), Window: time.Hour}})
	require.NoError(t, err)
	edited := apply("c-edited", "rt-edited")
	_, err = g.MarkForDeletion(t.Context(), "c-edited", ports.DeletionMark{Precondition: ports.Precondition{UID: edited.UID},
		Record: shootstate.PendingDeletion{RuntimeID: "rt-edited", MarkedAt: now, DueAt: now, Window: time.Hour}}) // due before its window
	require.NoError(t, err)
	g.PutForeign("c-foreign")

	got, err := f.ShootCounts(t.Context(), map[string]bool{"rt-live": true}, now)
	require.NoError(t, err)
	require.Equal(t, usecase.ShootsReport{Pending: 2, Invalid: 1, Orphaned: 1}, got)

	require.NoError(t, guard.StoreLedger(t.Context(), deletion.Ledger{Deletions: []time.Time{now.Add(-2 * time.Hour), now.Add(-time.Minute)}}, ""))
	guard.SetFrozen(true)
	st, err := f.GuardState(t.Context(), now)
	require.NoError(t, err)
	require.Equal(t, usecase.GuardReport{Brake: true, Used: 1, Limit: 3}, st)
}
