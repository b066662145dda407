package contract

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// shootsSafetyCases are the cases of the Shoots contract that make destructive writes safe: live reads, ownership
// per runtime, and preconditions on UID and resourceVersion.
var shootsSafetyCases = []shootsCase{
	{"a live read says so and sees the shoot at once", shootsLiveReadSeesAtOnce},
	{"a shoot of another runtime or pending deletion is not applied over", shootsOtherRuntimeOrPendingDeletionNotApplied},
	{"destructive writes carry the observed UID and version", shootsDestructiveWritesCarryPrecondition},
	{"current and retry", shootsCurrentAndRetry},
	{"ListManaged lists the operator's shoots, not foreign ones", shootsListManagedOnlyOperators},
}

// shootsLiveReadSeesAtOnce is the case "a live read says so and sees the shoot at once".
func shootsLiveReadSeesAtOnce(t *testing.T, f ShootsFixture) {
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: f.Spec("ct-live"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	s, err := f.Shoots.Get(t.Context(), "ct-live", ports.ReadLive)
	if err != nil || !s.Exists || !s.Live || s.UID == "" || s.ResourceVersion == "" {
		t.Fatalf("live get right after apply = %+v, %v; want the shoot, live, with UID and version", s, err)
	}
	missing, err := f.Shoots.Get(t.Context(), "absent", ports.ReadLive)
	if err != nil || missing.Exists || !missing.Live {
		t.Errorf("live get of a missing shoot = %+v, %v; want a live observation of nothing", missing, err)
	}
}

// shootsOtherRuntimeOrPendingDeletionNotApplied is the case "a shoot of another runtime or pending deletion is not applied over".
func shootsOtherRuntimeOrPendingDeletionNotApplied(t *testing.T, f ShootsFixture) {
	spec := f.Spec("ct-other")
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if err := Reapply(t, f, ports.ShootApply{Spec: spec, RuntimeID: "another-runtime", RuntimeGeneration: 1}); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("apply for another runtime: %v, want ErrShootNotManaged", err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := shootstate.PendingDeletion{RuntimeID: shootsRuntimeID, MarkedAt: now, DueAt: now.Add(time.Hour), Window: time.Hour}
	if _, err := UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.MarkForDeletion(t.Context(), "ct-other", ports.DeletionMark{Record: rec})
	}); err != nil {
		t.Fatalf("mark: %v", err)
	}
	if err := Reapply(t, f, ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 2}); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("apply over a shoot pending deletion: %v, want ErrShootNotManaged", err)
	}
}

// shootsDestructiveWritesCarryPrecondition is the case "destructive writes carry the observed UID and version".
func shootsDestructiveWritesCarryPrecondition(t *testing.T, f ShootsFixture) {
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: f.Spec("ct-pre"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := shootstate.PendingDeletion{RuntimeID: shootsRuntimeID, MarkedAt: now, DueAt: now, RuntimeNamespace: "kcp-system"}
	if _, err := f.Shoots.MarkForDeletion(t.Context(), "ct-pre", ports.DeletionMark{Record: rec, Precondition: ports.Precondition{UID: "not-the-uid"}}); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("mark with another UID: %v, want ErrConflict", err)
	}
	marked, err := UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.MarkForDeletion(t.Context(), "ct-pre", ports.DeletionMark{Record: rec})
	})
	if err != nil {
		t.Fatalf("mark: %v", err)
	}
	stale := ports.Precondition{UID: marked.UID, ResourceVersion: marked.ResourceVersion}
	f.Drift(t, "ct-pre") // someone changes the shoot meanwhile
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-pre", ports.ReadLive)
		return err == nil && got.ResourceVersion != marked.ResourceVersion
	}, patience, tick, "the change is visible")
	if err := f.Shoots.Delete(t.Context(), "ct-pre", stale); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("delete on a stale version: %v, want ErrConflict", err)
	}
	if err := f.Shoots.Delete(t.Context(), "ct-pre", ports.Precondition{UID: "not-the-uid"}); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("delete of another UID: %v, want ErrConflict", err)
	}
	s, err := f.Shoots.Get(t.Context(), "ct-pre", ports.ReadLive)
	if err != nil || s.Deleting() {
		t.Fatalf("after refused deletes: %+v, %v; want the shoot, not being deleted", s, err)
	}
	if pd := s.Marks.PendingDeletion; pd == nil || pd.RuntimeNamespace != "kcp-system" {
		t.Errorf("record after mark: %+v, want the runtime namespace recorded", pd)
	}
	// Gardener may change the shoot between a read and the delete (a conflict then is the point); with the
	// version of a fresh read the delete goes through.
	require.Eventually(t, func() bool {
		cur, err := f.Shoots.Get(t.Context(), "ct-pre", ports.ReadLive)
		if err != nil {
			return false
		}
		err = f.Shoots.Delete(t.Context(), "ct-pre", ports.Precondition{UID: cur.UID, ResourceVersion: cur.ResourceVersion})
		if err != nil && !errors.Is(err, ports.ErrConflict) {
			t.Fatalf("delete with the current version: %v", err)
		}
		return err == nil
	}, patience, tick, "delete with the version of a fresh read")
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-pre", ports.ReadLive)
		return err == nil && (!got.Exists || got.Deleting())
	}, patience, tick, "the shoot is being deleted")
}

// shootsCurrentAndRetry is the case "current and retry".
func shootsCurrentAndRetry(t *testing.T, f ShootsFixture) {
	if cur, err := f.Shoots.Current(t.Context(), "absent"); err != nil || cur != nil {
		t.Errorf("Current(absent) = %+v, %v; want nil", cur, err)
	}
	spec := f.Spec("ct-current")
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	require.Eventually(t, func() bool {
		cur, err := f.Shoots.Current(t.Context(), "ct-current")
		return err == nil && cur != nil && len(cur.Workers) == len(spec.Workers) && cur.Workers[0].Name == spec.Workers[0].Name
	}, patience, tick, "Current shows the applied pools")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := UntilNoConflict(func() (shootstate.Shoot, error) { return f.Shoots.RequestRetry(t.Context(), "ct-current", 2, at) })
	if err != nil || s.Marks.RetryAttempts != 2 || !s.Marks.RetryRequestedAt.Equal(at) || s.Marks.RetryShootGeneration != s.Generation {
		t.Errorf("retry = %+v, %v; want attempt 2 at %s for generation %d", s.Marks, err, at, s.Generation)
	}
	// Gardener makes a retry of a Failed shoot a new generation: the marks must name that one, or the next
	// failure of the same spec would count as its first (no growing backoff, no limit).
	f.Fail(t, "ct-current")
	before, err := f.Shoots.Get(t.Context(), "ct-current", ports.ReadLive)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	s, err = UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.RequestRetry(t.Context(), "ct-current", 3, at.Add(time.Minute))
	})
	if err != nil || s.Marks.RetryAttempts != 3 || s.Generation <= before.Generation || s.Marks.RetryShootGeneration != s.Generation {
		t.Errorf("retry of a Failed shoot = generation %d (before %d), marks %+v, %v; want attempt 3 for the new generation",
			s.Generation, before.Generation, s.Marks, err)
	}
	if got, err := f.Shoots.Get(t.Context(), "ct-current", ports.ReadLive); err != nil || got.Marks.RetryShootGeneration != got.Generation {
		t.Errorf("read after the retry: generation %d, marks %+v, %v; want the retry recorded for the current generation",
			got.Generation, got.Marks, err)
	}
	if _, err := f.Shoots.RequestRetry(t.Context(), "absent", 1, at); !errors.Is(err, ports.ErrShootNotFound) {
		t.Errorf("retry of a missing shoot: %v, want ErrShootNotFound", err)
	}
}

// shootsListManagedOnlyOperators is the case "ListManaged lists the operator's shoots, not foreign ones".
func shootsListManagedOnlyOperators(t *testing.T, f ShootsFixture) {
	a := ports.ShootApply{Spec: f.Spec("ct-listed"), RuntimeID: "rt-listed", SpecHash: "h1"}
	if _, err := f.Shoots.Apply(t.Context(), a); err != nil {
		t.Fatalf("apply: %v", err)
	}
	f.PutForeign(t, "ct-unlisted")
	require.Eventually(t, func() bool {
		list, err := f.Lister.ListManaged(t.Context())
		if err != nil {
			return false
		}
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		return slices.Contains(names, "ct-listed") && !slices.Contains(names, "ct-unlisted")
	}, patience, tick, "the applied shoot is listed, the foreign one is not")
}
