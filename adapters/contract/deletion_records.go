package contract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// RecordsFixture is one fresh store of the KCP's deletion records (nothing stored, the migration not done).
type RecordsFixture struct {
	Records ports.DeletionRecords
	// Namespace is a namespace the store keeps records in; Unwatched one it does not.
	Namespace, Unwatched string
}

// RunDeletionRecordsContract runs the DeletionRecords contract against fixtures made by newFixture (one per
// subtest).
func RunDeletionRecordsContract(t *testing.T, newFixture func(t *testing.T) RecordsFixture) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	record := func(f RecordsFixture, shoot, uid string) deletion.KCPRecord {
		return deletion.KCPRecord{RuntimeID: "rt-" + shoot, RuntimeNamespace: f.Namespace, ShootName: shoot, ShootUID: uid,
			MarkedAt: at, DueAt: at.Add(72 * time.Hour), CredentialsBinding: "cb-" + shoot, BindingRelease: deletion.BindingReleased}
	}
	get := func(t *testing.T, f RecordsFixture, ns, shoot string, mode ports.ReadMode) (deletion.KCPRecord, bool) {
		t.Helper()
		r, found, err := f.Records.Get(t.Context(), ns, shoot, mode)
		require.NoError(t, err)
		return r, found
	}

	t.Run("ForShoot returns the records of the shoot, with what was done to its binding", func(t *testing.T) {
		f := newFixture(t)
		want := record(f, "c-for", "uid-for")
		require.NoError(t, f.Records.Put(t.Context(), want))
		require.NoError(t, f.Records.Put(t.Context(), record(f, "c-other", "uid-other")))
		eventually(t, "a cached read catches up", func(c *assert.CollectT) {
			got, err := f.Records.ForShoot(t.Context(), "c-for")
			assert.NoError(c, err)
			assert.Equal(c, []deletion.KCPRecord{want}, got)
		})
		got, err := f.Records.ForShoot(t.Context(), "c-none")
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("a missing record is not found, not an error", func(t *testing.T) {
		f := newFixture(t)
		for _, mode := range []ports.ReadMode{ports.ReadCached, ports.ReadLive} {
			_, found := get(t, f, f.Namespace, "c-none", mode)
			require.False(t, found)
		}
	})

	t.Run("a stored record reads back exactly, cached and live, and is replaced by the next deletion of the shoot", func(t *testing.T) {
		f := newFixture(t)
		want := record(f, "c-one", "uid-1")
		require.NoError(t, f.Records.Put(t.Context(), want))
		got, found := get(t, f, f.Namespace, "c-one", ports.ReadLive)
		require.True(t, found)
		require.Equal(t, want, got)
		eventually(t, "a cached read catches up", func(c *assert.CollectT) {
			got, found, err := f.Records.Get(t.Context(), f.Namespace, "c-one", ports.ReadCached)
			assert.NoError(c, err)
			assert.True(c, found)
			assert.Equal(c, want, got)
		})
		again := want
		again.RuntimeID, again.ShootUID, again.MarkedAt, again.DueAt = "rt-new", "uid-2", at.Add(time.Hour), at.Add(100*time.Hour)
		require.NoError(t, f.Records.Put(t.Context(), again))
		got, _ = get(t, f, f.Namespace, "c-one", ports.ReadLive)
		require.Equal(t, again, got)
	})

	t.Run("an incomplete record is refused; none is stored outside the watched namespaces or read from there", func(t *testing.T) {
		f := newFixture(t)
		incomplete := record(f, "c-two", "")
		require.Error(t, f.Records.Put(t.Context(), incomplete))
		_, found := get(t, f, f.Namespace, "c-two", ports.ReadLive)
		require.False(t, found)
		outside := record(f, "c-two", "uid-2")
		outside.RuntimeNamespace = f.Unwatched
		require.Error(t, f.Records.Put(t.Context(), outside))
		_, found = get(t, f, f.Unwatched, "c-two", ports.ReadLive)
		require.False(t, found)
	})

	t.Run("the records of a shoot that is gone are removed, the record of its successor stays", func(t *testing.T) {
		f := newFixture(t)
		require.NoError(t, f.Records.Put(t.Context(), record(f, "c-three", "uid-new")))
		eventually(t, "cached", func(c *assert.CollectT) {
			_, found, err := f.Records.Get(t.Context(), f.Namespace, "c-three", ports.ReadCached)
			assert.NoError(c, err)
			assert.True(c, found)
		})
		require.NoError(t, f.Records.RemoveForShoot(t.Context(), "c-three", "uid-new"))
		_, found := get(t, f, f.Namespace, "c-three", ports.ReadLive)
		require.True(t, found, "the record of the shoot that exists was removed")
		require.NoError(t, f.Records.RemoveForShoot(t.Context(), "c-three", ""))
		_, found = get(t, f, f.Namespace, "c-three", ports.ReadLive)
		require.False(t, found)
		require.NoError(t, f.Records.RemoveForShoot(t.Context(), "c-three", ""), "removing nothing is no error")
	})

	t.Run("a taken-back deletion's record is withdrawn, another shoot object's stays", func(t *testing.T) {
		f := newFixture(t)
		rec := deletion.KCPRecord{RuntimeID: "rt-1", RuntimeNamespace: f.Namespace, ShootName: "c-four", ShootUID: "uid-old",
			MarkedAt: at, DueAt: at.Add(time.Hour)}
		require.NoError(t, f.Records.Put(t.Context(), rec))
		require.NoError(t, f.Records.Withdraw(t.Context(), "c-four", "uid-new"))
		_, found := get(t, f, f.Namespace, "c-four", ports.ReadLive)
		require.True(t, found, "the record of another shoot object under the name was withdrawn")
		require.NoError(t, f.Records.Withdraw(t.Context(), "c-four", "uid-old"))
		_, found = get(t, f, f.Namespace, "c-four", ports.ReadLive)
		require.False(t, found, "the taken-back deletion's record is still there")
		require.NoError(t, f.Records.Withdraw(t.Context(), "c-four", "uid-old"), "withdrawing nothing is no error")
	})

	t.Run("the migration is done once", func(t *testing.T) {
		f := newFixture(t)
		done, err := f.Records.Migrated(t.Context())
		require.NoError(t, err)
		require.False(t, done)
		require.NoError(t, f.Records.SetMigrated(t.Context(), at))
		require.NoError(t, f.Records.SetMigrated(t.Context(), at.Add(time.Hour)), "idempotent")
		done, err = f.Records.Migrated(t.Context())
		require.NoError(t, err)
		require.True(t, done)
	})
}
