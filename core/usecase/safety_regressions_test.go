package usecase_test

import (
	"fmt"
	"testing"
	"time"
)

// safetyRegressions are shrunk sequences the property test once found, pinned as literal steps: a seed replays only
// as long as the model draws steps the same way, a literal sequence replays for good.
var safetyRegressions = map[string]struct {
	seed  uint64 // the world's own randomness (injected faults)
	steps []step
}{
	// A taken-back deletion's KCP record outlived it: rt-e's cluster, never healthy when KEB deleted it (window 0),
	// was taken back by rt-e re-created, became Ready and was deleted again; a record someone wrote on the shoot
	// naming another runtime made the teardown leave the shoot alone, and a second one naming rt-e (window 0,
	// marked a week ago) was backed by the first deletion's KCP record: the cluster was deleted without a window.
	"stale KCP record backs a forged one": {seed: 1796201977079125982, steps: []step{
		{Op: opCreate, Runtime: 4, Shoot: 2, Plan: 1, D: 73 * time.Hour},
		{Op: opReconcile, Runtime: 0, Shoot: 1, N: 32, Side: &step{Op: opSecretPlant, Runtime: 4, Shoot: 2, N: 48, On: true}},
		{Op: opFail, Runtime: 4, Shoot: 3, N: 40},
		{Op: opMassDelete},
		{Op: opReconcile, Runtime: 1, Shoot: 3, N: 37},
		{Op: opCreate, Runtime: 4, Shoot: 2, Plan: 0},
		{Op: opTimePasses, D: 30 * time.Minute},
		{Op: opReconcile, N: 26},
		{Op: opReconcile, N: 0},
		{Op: opKubeconfig, N: 79, Side: &step{Op: opGCReconcile, N: 50, On: true}},
		{Op: opGardener, N: 79},
		{Op: opReconcile, N: 59},
		{Op: opMassDelete},
		{Op: opForge, Runtime: 2, N: 69, On: true, Side: &step{Op: opSecretPlant, Runtime: 1, Shoot: 2, N: 92}},
		{Op: opReconcile, N: 11},
		{Op: opForge, Runtime: 4, N: 31, Side: &step{Op: opGCCreate, Runtime: 2, Shoot: 3, N: 29}},
	}},
	// The last user's label taken by a sibling (issue 39 item 1; seed 1796418851334807813): rt-a (c-one) and rt-c
	// (c-two), two runtimes of one global account on cb-1, were deleted one after the other; each deletion held the
	// operator's dirty label. When c-one's shoot was gone, the reaper gave the binding back because c-two named it,
	// although c-two waited for its own deletion: cb-1 was left without dirty while no live shoot named it.
	"a sibling waiting for deletion is no tenant to give the binding back to": {seed: 1796418851334807813, steps: []step{
		{Op: opCreate, Runtime: 2, Shoot: 1, N: 23, D: 30 * time.Minute},
		{Op: opFaults, Shoot: 1, Plan: 1, N: 22, D: 1 * time.Minute, On: true},
		{Op: opCreate, N: 72, D: 1320 * time.Minute},
		{Op: opReconcile, Runtime: 2, Plan: 2, N: 54, D: 60 * time.Minute},
		{Op: opCreate, Runtime: 4, Shoot: 4, Plan: 2, N: 37, D: 1500 * time.Minute, On: true},
		{Op: opForeign, Runtime: 2, Shoot: 4, Plan: 1, N: 34, D: 1320 * time.Minute, On: true},
		{Op: opReconcile, Shoot: 4, Plan: 1, N: 40, D: 1320 * time.Minute, Side: &step{Op: opGCReconcile, Runtime: 3, Shoot: 3, N: 61, On: true}},
		{Op: opReconcile, Shoot: 1, Plan: 1, N: 96, D: 4200 * time.Minute, Side: &step{Op: opGCHostile, Runtime: 3, Shoot: 2, N: 14}},
		{Op: opMassDelete, Runtime: 3, Shoot: 1, N: 41, D: 60 * time.Minute},
		{Op: opReconcile, Runtime: 1, Shoot: 3, Plan: 1, N: 12, D: 4200 * time.Minute},
		{Op: opReconcile, Runtime: 2, Shoot: 3, N: 31, D: 1320 * time.Minute},
		{Op: opReconcile, Runtime: 4, Shoot: 4, Plan: 2, N: 86, D: 4380 * time.Minute},
		{Op: opReconcile, Runtime: 4, Shoot: 2, N: 91, D: 1 * time.Minute, On: true},
		{Op: opReap, Runtime: 1, Shoot: 4, Plan: 2, N: 88, D: 1500 * time.Minute, Side: &step{Op: opGCReconcile, Runtime: 3, Shoot: 4, N: 96}},
		{Op: opReconcile, Runtime: 4, Shoot: 4, Plan: 2, N: 70, D: 1500 * time.Minute, Side: &step{Op: opGCCreate, Runtime: 1, N: 57}},
		{Op: opReconcile, Shoot: 2, Plan: 1, N: 32, D: 60 * time.Minute, On: true},
		{Op: opReap, Runtime: 4, Shoot: 4, Plan: 1, N: 24, D: 4200 * time.Minute},
		{Op: opTimePasses, Runtime: 4, Shoot: 1, N: 53, D: 60 * time.Minute},
		{Op: opGardener, Runtime: 4, Plan: 2, N: 64, D: 11520 * time.Minute, On: true, Side: &step{Op: opGCReconcile, N: 6}},
		{Op: opReap, Shoot: 2, Plan: 2, N: 55, D: 60 * time.Minute, On: true},
		{Op: opReconcile, Shoot: 2, N: 22, D: 4380 * time.Minute},
		{Op: opGardener, Runtime: 1, Shoot: 1, Plan: 2, N: 10, D: 4380 * time.Minute, Side: &step{Op: opGCReconcile, Shoot: 4, N: 84}},
		{Op: opKubeconfig, Runtime: 1, Plan: 2, N: 90, D: 60 * time.Minute, On: true, Side: &step{Op: opGCReconcile, Runtime: 3, Shoot: 2, N: 61}},
		{Op: opKubeconfig, Shoot: 4, Plan: 2, N: 3, D: 30 * time.Minute, On: true},
		{Op: opForeign, Shoot: 1, N: 28, D: 4380 * time.Minute, On: true, Side: &step{Op: opGCCreate, Runtime: 1, Shoot: 2, N: 68, On: true}},
		{Op: opGardener, Shoot: 4, Plan: 2, N: 14, D: 30 * time.Minute, On: true},
		{Op: opDelete, Runtime: 4, Plan: 2, N: 81, D: 30 * time.Minute},
		{Op: opTimePasses, Plan: 1, N: 26, D: 4200 * time.Minute},
		{Op: opDelete, Runtime: 3, Shoot: 1, N: 14, D: 11520 * time.Minute},
		{Op: opSkew, Runtime: 3, Shoot: 3, Plan: 2, N: 96, D: 1 * time.Minute},
		{Op: opMassDelete, Runtime: 1, Shoot: 4, Plan: 1, N: 13, D: 60 * time.Minute, On: true, Side: &step{Op: opSecretPlant, Runtime: 3, Shoot: 1, N: 48, On: true}},
		{Op: opGardener, Runtime: 3, Plan: 2, N: 7, D: 4380 * time.Minute},
		{Op: opSync, Runtime: 4, Shoot: 1, Plan: 1, N: 95, D: 11520 * time.Minute},
		{Op: opGardener, Runtime: 1, Plan: 2, N: 58, D: 30 * time.Minute, On: true},
		{Op: opReconcile, Runtime: 4, Shoot: 2, Plan: 1, N: 29, D: 4380 * time.Minute, On: true, Side: &step{Op: opGCCreate, Runtime: 1, Shoot: 4, N: 74, On: true}},
		{Op: opReap, N: 95, D: 60 * time.Minute, On: true},
	}},
	// A restore on a lagging cache (found with the stricter invariant 10, seed 15277): rt-e's cluster c-one, whose
	// deletion held the label on cb-1, was already being deleted by Gardener when rt-e was created again; the cache
	// still showed it waiting, and the take-back removed the label and withdrew the record before its cancel failed:
	// cb-1 was left without dirty while only c-two, waiting for its own deletion, named it.
	"a restore on a lagging cache undoes the binding of a shoot Gardener deletes": {seed: 15277, steps: []step{
		{Op: opCreate, Runtime: 4, Plan: 2, N: 89, D: 4200 * time.Minute, On: true},
		{Op: opCreate, Shoot: 1, N: 54, D: 11520 * time.Minute, Side: &step{Op: opGCReconcile, Shoot: 4, N: 89, On: true}},
		{Op: opReconcile, Runtime: 1, Shoot: 3, Plan: 2, N: 63, D: 60 * time.Minute},
		{Op: opReconcile, Runtime: 2, Shoot: 3, N: 30, D: 4380 * time.Minute, On: true},
		{Op: opMassDelete, Runtime: 2, Shoot: 1, Plan: 2, N: 94, D: 1320 * time.Minute, On: true, Side: &step{Op: opGCReconcile, Runtime: 2, N: 25, On: true}},
		{Op: opReconcile, Plan: 1, N: 1, D: 60 * time.Minute, On: true},
		{Op: opLag, Shoot: 4, Plan: 1, N: 26, D: 4200 * time.Minute, On: true},
		{Op: opReconcile, Shoot: 4, N: 36, D: 4200 * time.Minute},
		{Op: opReap, Runtime: 1, Shoot: 4, Plan: 1, N: 62, D: 30 * time.Minute},
		{Op: opTimePasses, Runtime: 2, Shoot: 3, Plan: 1, N: 46, D: 4200 * time.Minute, Side: &step{Op: opGCCreate, Runtime: 4, Shoot: 3, N: 83, On: true}},
		{Op: opRecreateSame, Runtime: 4, Shoot: 2, Plan: 2, N: 87, D: 1320 * time.Minute, On: true},
		{Op: opReconcile, Shoot: 4, Plan: 2, N: 65, D: 4200 * time.Minute, Side: &step{Op: opGCCreate, Runtime: 3, N: 36, On: true}},
	}},
}

// TestSafetyRegressions replays every pinned sequence with the drain and checks the invariants after each step.
func TestSafetyRegressions(t *testing.T) {
	for name, r := range safetyRegressions {
		t.Run(name, func(t *testing.T) {
			if failed, err := run(r.seed, r.steps, true, nil); err != nil {
				lines := ""
				for i, s := range r.steps {
					lines += fmt.Sprintf("\n  %2d %s", i, s)
				}
				t.Fatalf("step %d: %v%s", failed, err, lines)
			}
		})
	}
}
