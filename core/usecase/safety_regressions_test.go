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
