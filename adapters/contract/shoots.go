package contract

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// ShootsFixture is one fresh garden project under test.
type ShootsFixture struct {
	Shoots ports.Shoots
	// Lister lists the same garden's shoots.
	Lister ports.ShootLister
	// Spec returns a valid desired spec for a new shoot name (valid for the garden behind Shoots).
	Spec func(name string) shoot.Spec
	// PutForeign creates a shoot as someone else would, without the operator's marks.
	PutForeign func(t *testing.T, name string)
	// WorkerNames returns the worker pool names the garden holds for the shoot.
	WorkerNames func(t *testing.T, name string) []string
	// PutPredecessor creates a shoot as the system the operator replaces did: the runtime-id annotation naming
	// runtimeID, without the operator's managed-by mark.
	PutPredecessor func(t *testing.T, name, runtimeID string)
	// PutProvisioned creates a shoot as the provisioner before the previous infrastructure manager did: its own
	// runtime-id annotation naming runtimeID, no mark of the operator or of the previous infrastructure manager.
	PutProvisioned func(t *testing.T, name, runtimeID string)
	// Drift changes a value the operator owns in the shoot (the first pool's maximum) as someone else would.
	Drift func(t *testing.T, name string)
	// Fail reports the shoot's last operation Failed, as the gardenlet does when it gives up.
	Fail func(t *testing.T, name string)
}

// Reapply applies a again to an existing shoot the way callers must: pinned to the shoot they observed.
// Gardener may change the shoot in between (a conflict, retried on a fresh read).
func Reapply(t *testing.T, f ShootsFixture, a ports.ShootApply) error {
	t.Helper()
	_, err := UntilNoConflict(func() (shootstate.Shoot, error) {
		cur, err := f.Shoots.Get(t.Context(), a.Spec.Name, ports.ReadLive)
		if err != nil {
			return cur, err
		}
		a.Precondition = ports.Precondition{UID: cur.UID, ResourceVersion: cur.ResourceVersion}
		return f.Shoots.Apply(t.Context(), a)
	})
	return err
}

// adopt adopts the shoot name for shootsRuntimeID as a use case does: a conflict with the garden's own writes to a
// shoot it is reconciling is retried on the next pass.
func adopt(t *testing.T, f ShootsFixture, name string) (shootstate.Shoot, error) {
	return UntilNoConflict(func() (shootstate.Shoot, error) { return f.Shoots.Adopt(t.Context(), name, shootsRuntimeID, "aws") })
}

// shootsRuntimeID is the runtime the Shoots contract applies for.
const shootsRuntimeID = "9f1c0000-0000-4000-8000-000000000001"

// shootsCase is one case of a contract over ShootsFixture: its subtest name and what it checks on a fresh fixture.
type shootsCase struct {
	name string
	run  func(t *testing.T, f ShootsFixture)
}

// shootsCases are the Shoots contract's cases in the order they run; each is a function of its own so a failing
// subtest's name leads to its code.
var shootsCases = []shootsCase{
	{"a missing shoot is not an error", shootsMissingIsNoError},
	{"apply creates the shoot with the operator's marks and is idempotent", shootsApplyCreatesMarkedAndIdempotent},
	{"in sync after apply, not after someone else's change, again after re-apply", shootsInSyncTracksApplyAndDrift},
	{"a foreign shoot is never in sync", shootsForeignNeverInSync},
	{"adopt takes over a predecessor's shoot of the same runtime only", shootsAdoptPredecessorOfSameRuntimeOnly},
	{"adopt takes over a provisioner's shoot, which can then be applied", shootsAdoptProvisionersShoot},
	{"changes to an adopted shoot are held until approved, then never again", shootsAdoptedChangesHeldUntilApproved},
	{"a removed worker pool is gone after apply", shootsRemovedPoolGone},
	{"a foreign shoot is never changed", shootsForeignNeverChanged},
	{"deleting a missing shoot succeeds", shootsDeleteMissingSucceeds},
	{"mark, restore spec, cancel", shootsMarkRestoreCancel},
	{"force-deletion is refused without a deletion and an accepted code", shootsForceDeleteRefusedWhileLive},
	{"an apply computed from a stale observation is refused", shootsStaleApplyRefused},
}

// RunShootsContract runs the Shoots contract against fixtures made by newFixture (one per subtest).
func RunShootsContract(t *testing.T, newFixture func(t *testing.T) ShootsFixture) {
	runShootsCases(t, newFixture, shootsCases)
	runShootsCases(t, newFixture, shootsSafetyCases)
}

// runShootsCases runs each case as a subtest of its name on a fixture of its own.
func runShootsCases(t *testing.T, newFixture func(t *testing.T) ShootsFixture, cases []shootsCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newFixture(t)) })
	}
}

// shootsMissingIsNoError is the case "a missing shoot is not an error".
func shootsMissingIsNoError(t *testing.T, f ShootsFixture) {
	s, err := f.Shoots.Get(t.Context(), "absent", ports.ReadCached)
	if err != nil || s.Exists {
		t.Fatalf("Get(absent) = %+v, %v; want Exists=false and no error", s, err)
	}
}

// shootsApplyCreatesMarkedAndIdempotent is the case "apply creates the shoot with the operator's marks and is idempotent".
func shootsApplyCreatesMarkedAndIdempotent(t *testing.T, f ShootsFixture) {
	spec := f.Spec("ct-apply")
	s, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 2, SpecHash: "h"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !s.OwnedBy(shootsRuntimeID) || s.Marks.AppliedRuntimeGeneration != 2 || s.Marks.AppliedSpecHash != "h" {
		t.Fatalf("marks after apply: %+v (generation %d)", s.Marks, s.Generation)
	}
	// Gardener itself changes a new shoot (seed binding, defaults), so the comparison is with the shoot right
	// before the second apply: applying the same spec and marks again writes nothing.
	require.Eventually(t, func() bool {
		before, err := f.Shoots.Get(t.Context(), "ct-apply", ports.ReadLive)
		if err != nil {
			return false
		}
		again, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 2, SpecHash: "h",
			Precondition: ports.Precondition{UID: before.UID, ResourceVersion: before.ResourceVersion}})
		if errors.Is(err, ports.ErrConflict) {
			return false // Gardener changed it meanwhile: read again
		}
		if err != nil {
			t.Fatalf("second apply: %v", err)
		}
		if again.Generation != before.Generation {
			t.Fatalf("applying the same spec again changed the shoot's spec: generation %d -> %d", before.Generation, again.Generation)
		}
		return true
	}, patience, tick, "the same apply again changes nothing")
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-apply", ports.ReadCached)
		return err == nil && got.OwnedBy(shootsRuntimeID)
	}, patience, tick, "Get shows the applied shoot")
}

// shootsInSyncTracksApplyAndDrift is the case "in sync after apply, not after someone else's change, again after
// re-apply", with the record of an answer: only an answer "in sync" has one, the same inputs give the same record,
// and a record given back never hides a change (it answers only for the inputs it was made of).
func shootsInSyncTracksApplyAndDrift(t *testing.T, f ShootsFixture) {
	a := ports.ShootApply{Spec: f.Spec("ct-sync"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1, SpecHash: "h1"}
	if got, err := f.Shoots.InSync(t.Context(), a); err != nil || got != (ports.SyncCheck{}) {
		t.Fatalf("InSync before the shoot exists = %+v, %v; want not in sync, no record", got, err)
	}
	if _, err := f.Shoots.Apply(t.Context(), a); err != nil {
		t.Fatalf("apply: %v", err)
	}
	check := func(a ports.ShootApply) ports.SyncCheck {
		got, err := f.Shoots.InSync(t.Context(), a)
		if err != nil {
			return ports.SyncCheck{}
		}
		if !got.InSync && got.Record != "" {
			t.Errorf("an answer 'not in sync' with a record: %+v", got)
		}
		return got
	}
	inSync := func(a ports.ShootApply) bool { return check(a).InSync }
	require.Eventually(t, func() bool { return inSync(a) }, patience, tick, "in sync after apply")
	// A real garden may still change the new shoot between two answers (the scheduler's seed raises its generation,
	// its controllers add annotations), which gives other inputs and another record; on a loaded machine that comes
	// later. So the pair is asked again until the shoot held still between its two answers.
	var first ports.SyncCheck
	withRecord := a
	eventually(t, "the same inputs with their record: the same answer", func(c *assert.CollectT) {
		first = check(a)
		if !assert.NotEmpty(c, first.Record, "an answer 'in sync' has a record") {
			return
		}
		withRecord.InSyncRecord = first.Record
		assert.Equal(c, first, check(withRecord))
	})
	other := a
	other.RuntimeGeneration, other.SpecHash = 2, "h2"
	if inSync(other) {
		t.Error("in sync with a spec of another generation")
	}
	other.InSyncRecord = first.Record
	if inSync(other) {
		t.Error("in sync with a spec of another generation, given the record of the first")
	}
	f.Drift(t, "ct-sync")
	require.Eventually(t, func() bool { return !inSync(a) }, patience, tick, "not in sync after someone else changed the shoot")
	if inSync(withRecord) {
		t.Error("in sync after someone else changed the shoot, given the record of before the change")
	}
	if err := Reapply(t, f, a); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	require.Eventually(t, func() bool { return inSync(a) }, patience, tick, "in sync after re-apply")
}

// shootsForeignNeverInSync is the case "a foreign shoot is never in sync".
func shootsForeignNeverInSync(t *testing.T, f ShootsFixture) {
	f.PutForeign(t, "ct-foreign-sync")
	if got, err := f.Shoots.InSync(t.Context(), ports.ShootApply{Spec: f.Spec("ct-foreign-sync"), RuntimeID: shootsRuntimeID}); err != nil || got.InSync {
		t.Errorf("InSync of a foreign shoot = %+v, %v; want false", got, err)
	}
}

// shootsAdoptPredecessorOfSameRuntimeOnly is the case "adopt takes over a predecessor's shoot of the same runtime only".
func shootsAdoptPredecessorOfSameRuntimeOnly(t *testing.T, f ShootsFixture) {
	f.PutPredecessor(t, "ct-adopt", shootsRuntimeID)
	f.PutForeign(t, "ct-adopt-foreign")
	if _, err := f.Shoots.Adopt(t.Context(), "ct-adopt", "another-runtime", "aws"); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("adopt for another runtime: %v, want ErrShootNotManaged", err)
	}
	if _, err := f.Shoots.Adopt(t.Context(), "ct-adopt-foreign", shootsRuntimeID, "aws"); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("adopt of a shoot without a runtime ID: %v, want ErrShootNotManaged", err)
	}
	if _, err := f.Shoots.Adopt(t.Context(), "absent", shootsRuntimeID, "aws"); !errors.Is(err, ports.ErrShootNotFound) {
		t.Errorf("adopt of a missing shoot: %v, want ErrShootNotFound", err)
	}
	s, err := adopt(t, f, "ct-adopt")
	if err != nil || !s.OwnedBy(shootsRuntimeID) {
		t.Fatalf("adopt = %+v, %v; want owned by %s", s.Marks, err, shootsRuntimeID)
	}
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-adopt", ports.ReadCached)
		return err == nil && got.OwnedBy(shootsRuntimeID)
	}, patience, tick, "Get shows the adopted shoot")
	if _, err := adopt(t, f, "ct-adopt"); err != nil {
		t.Errorf("adopting again: %v", err)
	}
}

// shootsAdoptProvisionersShoot is the case "adopt takes over a provisioner's shoot, which can then be applied".
func shootsAdoptProvisionersShoot(t *testing.T, f ShootsFixture) {
	f.PutProvisioned(t, "ct-adopt-prov", shootsRuntimeID)
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-adopt-prov", ports.ReadCached)
		return err == nil && got.Exists && got.Marks.RuntimeID == shootsRuntimeID && !got.Marks.Managed
	}, patience, tick, "Get names the provisioner's runtime ID, unmanaged")
	if _, err := f.Shoots.Adopt(t.Context(), "ct-adopt-prov", "another-runtime", "aws"); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("adopt for another runtime: %v, want ErrShootNotManaged", err)
	}
	s, err := adopt(t, f, "ct-adopt-prov")
	if err != nil || !s.OwnedBy(shootsRuntimeID) {
		t.Fatalf("adopt = %+v, %v; want owned by %s", s.Marks, err, shootsRuntimeID)
	}
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-adopt-prov", ports.ReadCached)
		return err == nil && got.OwnedBy(shootsRuntimeID)
	}, patience, tick, "Get shows the adopted shoot")
	if err := Reapply(t, f, ports.ShootApply{Spec: f.Spec("ct-adopt-prov"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Errorf("apply to the adopted shoot: %v", err)
	}
}

// shootsAdoptedChangesHeldUntilApproved is the case "changes to an adopted shoot are held until approved, then never again".
func shootsAdoptedChangesHeldUntilApproved(t *testing.T, f ShootsFixture) {
	f.PutPredecessor(t, "ct-adopt-hold", shootsRuntimeID)
	if _, err := adopt(t, f, "ct-adopt-hold"); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	spec := f.Spec("ct-adopt-hold")
	spec.Workers[0].Maximum += 3 // a value the predecessor's shoot holds differently
	held := ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 1, SpecHash: "h1", HoldAdoptedChanges: true}
	before, err := f.Shoots.Get(t.Context(), "ct-adopt-hold", ports.ReadLive)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if err := Reapply(t, f, held); !errors.Is(err, ports.ErrAdoptionReviewRequired) {
		t.Fatalf("held apply of a changing spec: %v, want ErrAdoptionReviewRequired", err)
	}
	after, err := f.Shoots.Get(t.Context(), "ct-adopt-hold", ports.ReadLive)
	// Gardener's scheduler may set spec.seedName of the new shoot meanwhile: one generation, explained by the seed.
	scheduled := before.SeedName == "" && after.SeedName != "" && after.Generation == before.Generation+1
	if err != nil || (after.Generation != before.Generation && !scheduled) || after.Marks.AppliedSpecHash != "" {
		t.Fatalf("the held apply wrote: generation %d -> %d, spec hash %q (%v)", before.Generation, after.Generation, after.Marks.AppliedSpecHash, err)
	}
	approved := held
	approved.HoldAdoptedChanges = false
	if err := Reapply(t, f, approved); err != nil {
		t.Fatalf("approved apply: %v", err)
	}
	// Taken over: later changes (KEB's) are applied although the hold is asked for.
	held.Spec.Workers[0].Maximum++
	held.RuntimeGeneration, held.SpecHash = 2, "h2"
	if err := Reapply(t, f, held); err != nil {
		t.Fatalf("apply to a shoot taken over, hold asked: %v", err)
	}
}

// shootsRemovedPoolGone is the case "a removed worker pool is gone after apply".
func shootsRemovedPoolGone(t *testing.T, f ShootsFixture) {
	spec := f.Spec("ct-pools")
	extra := spec.Workers[0]
	extra.Name = "extra"
	spec.Workers = append(spec.Workers, extra)
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply with two pools: %v", err)
	}
	spec.Workers = spec.Workers[:1]
	if err := Reapply(t, f, ports.ShootApply{Spec: spec, RuntimeID: shootsRuntimeID, RuntimeGeneration: 2}); err != nil {
		t.Fatalf("apply with one pool: %v", err)
	}
	if got := f.WorkerNames(t, "ct-pools"); len(got) != 1 || got[0] != spec.Workers[0].Name {
		t.Errorf("worker pools after removal: %v", got)
	}
}

// shootsForeignNeverChanged is the case "a foreign shoot is never changed".
func shootsForeignNeverChanged(t *testing.T, f ShootsFixture) {
	f.PutForeign(t, "ct-foreign")
	// Seen: refused as not ours. Not seen (a stale view): a conflict, so the caller looks again instead of
	// reporting a failure; either way nothing is written.
	if err := Reapply(t, f, ports.ShootApply{Spec: f.Spec("ct-foreign"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("apply over a foreign shoot: %v, want ErrShootNotManaged", err)
	}
	_, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: f.Spec("ct-foreign"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1})
	if !errors.Is(err, ports.ErrConflict) {
		t.Errorf("create over a foreign shoot the caller did not see: %v, want ErrConflict", err)
	}
	if err := f.Shoots.Delete(t.Context(), "ct-foreign", ports.Precondition{}); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("delete of a foreign shoot: %v, want ErrShootNotManaged", err)
	}
	_, err = f.Shoots.MarkForDeletion(t.Context(), "ct-foreign", ports.DeletionMark{})
	if !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("mark of a foreign shoot: %v, want ErrShootNotManaged", err)
	}
}

// shootsDeleteMissingSucceeds is the case "deleting a missing shoot succeeds".
func shootsDeleteMissingSucceeds(t *testing.T, f ShootsFixture) {
	if err := f.Shoots.Delete(t.Context(), "absent", ports.Precondition{}); err != nil {
		t.Errorf("delete absent: %v", err)
	}
}

// shootsMarkRestoreCancel is the case "mark, restore spec, cancel".
func shootsMarkRestoreCancel(t *testing.T, f ShootsFixture) {
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: f.Spec("ct-mark"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	markedAt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := shootstate.PendingDeletion{RuntimeID: shootsRuntimeID, Plan: "aws", MarkedAt: markedAt, DueAt: markedAt.Add(72 * time.Hour)}
	s, err := UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.MarkForDeletion(t.Context(), "ct-mark", ports.DeletionMark{Record: rec, Hibernate: true, RestoreSpec: []byte(`{"kind":"Runtime"}`)})
	})
	if err != nil {
		t.Fatalf("mark: %v", err)
	}
	if pd := s.Marks.PendingDeletion; pd == nil || !pd.DueAt.Equal(rec.DueAt) || !pd.MarkedAt.Equal(rec.MarkedAt) || pd.Plan != "aws" || !s.HibernationRequested {
		t.Fatalf("after mark: %+v, hibernation %v", s.Marks.PendingDeletion, s.HibernationRequested)
	}
	doc, err := f.Shoots.RestoreSpec(t.Context(), "ct-mark")
	if err != nil || string(doc) != `{"kind":"Runtime"}` {
		t.Fatalf("restore spec = %q, %v", doc, err)
	}
	if _, err := UntilNoConflict(func() (struct{}, error) { return struct{}{}, f.Shoots.RequestRestore(t.Context(), "ct-mark") }); err != nil {
		t.Fatalf("request restore: %v", err)
	}
	require.Eventually(t, func() bool {
		got, err := f.Shoots.Get(t.Context(), "ct-mark", ports.ReadCached)
		return err == nil && got.Marks.PendingDeletion != nil && got.Marks.PendingDeletion.RestoreRequested
	}, patience, tick, "the restore request is visible")
	if _, err := UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.CancelDeletion(t.Context(), "ct-mark", "another-runtime", "", ports.Precondition{})
	}); !errors.Is(err, ports.ErrShootNotManaged) {
		t.Errorf("cancel for a runtime the record does not name: %v, want ErrShootNotManaged", err)
	}
	if _, err := f.Shoots.CancelDeletion(t.Context(), "ct-mark", shootsRuntimeID, "", ports.Precondition{UID: "not-the-uid"}); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("cancel with another UID: %v, want ErrConflict", err)
	}
	// The caller's plan (the longest of record, shoot and runtime) is what the shoot keeps.
	uid := s.UID
	s, err = UntilNoConflict(func() (shootstate.Shoot, error) {
		return f.Shoots.CancelDeletion(t.Context(), "ct-mark", shootsRuntimeID, "azure", ports.Precondition{UID: uid})
	})
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if s.Marks.PendingDeletion != nil || s.HibernationRequested || s.Marks.RuntimeID != shootsRuntimeID || !s.Live || s.Marks.Plan != "azure" {
		t.Errorf("after cancel: marks %+v, hibernation %v, live %v", s.Marks, s.HibernationRequested, s.Live)
	}
}

// shootsForceDeleteRefusedWhileLive is the case "force-deletion is refused without a deletion and an accepted code".
func shootsForceDeleteRefusedWhileLive(t *testing.T, f ShootsFixture) {
	if _, err := f.Shoots.Apply(t.Context(), ports.ShootApply{Spec: f.Spec("ct-force"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	// A conflict says nothing was written: the new shoot's status moves on while the adapter reads and patches (on a
	// loaded machine its retries can all lose to the simulated gardenlet's writes), and a caller tries again. Only
	// the answer that is not a conflict is judged.
	var err error
	deadline := time.Now().Add(patience)
	for err = f.Shoots.ForceDelete(t.Context(), "ct-force", ports.Precondition{}); errors.Is(err, ports.ErrConflict) && time.Now().Before(deadline); {
		time.Sleep(tick)
		err = f.Shoots.ForceDelete(t.Context(), "ct-force", ports.Precondition{})
	}
	if !errors.Is(err, ports.ErrShootRejected) {
		t.Errorf("force-delete of a live shoot: %v, want ErrShootRejected", err)
	}
}

// shootsStaleApplyRefused is the case "an apply computed from a stale observation is refused".
func shootsStaleApplyRefused(t *testing.T, f ShootsFixture) {
	a := ports.ShootApply{Spec: f.Spec("ct-stale"), RuntimeID: shootsRuntimeID, RuntimeGeneration: 1}
	first, err := f.Shoots.Apply(t.Context(), a)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, err := f.Shoots.Apply(t.Context(), a); !errors.Is(err, ports.ErrConflict) {
		t.Errorf("a create over an existing shoot (the caller saw none): %v, want ErrConflict", err)
	}
	f.Drift(t, "ct-stale")
	a.Precondition = ports.Precondition{UID: first.UID, ResourceVersion: first.ResourceVersion}
	require.Eventually(t, func() bool {
		_, err := f.Shoots.Apply(t.Context(), a)
		return errors.Is(err, ports.ErrConflict)
	}, patience, tick, "an apply pinned to the version before the change is refused")
}
