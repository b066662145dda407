package usecase_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
)

// reapCalls is what one shoot event costs the reaper use case: the port calls of a pass over c-0 inside its window
// and of the pass that deletes it after the window, in a garden of fleet marked shoots.
func reapCalls(t *testing.T, fleet int) (waiting, deleting map[string]int) {
	t.Helper()
	w := newReaperWorld(t, 10)
	for i := range fleet {
		w.marked(t, fmt.Sprintf("c-%d", i))
	}
	pass := func(want deletion.ReapStep) map[string]int {
		before := w.garden.Calls()
		res, err := w.reaper.Reap(context.Background(), "c-0", w.clock.Now())
		if err != nil || res.Decision.Step != want {
			t.Fatalf("fleet %d: %+v, %v; want step %s", fleet, res.Decision, err, want)
		}
		after := w.garden.Calls()
		for m, n := range before {
			after[m] -= n
		}
		maps.DeleteFunc(after, func(_ string, n int) bool { return n == 0 })
		return after
	}
	waiting = pass(deletion.StepWaitWindow)
	w.clock.Step(2 * time.Hour)
	deleting = pass(deletion.StepDelete)
	return waiting, deleting
}

// TestReaperWorkPerEventDoesNotGrowWithTheFleet pins that a shoot event costs the reaper the same port calls in a
// garden of one shoot as in one of 400: it reads the one shoot (cached, then live before a deletion), never lists
// the fleet (issue 18: a reaper that listed every managed shoot per event was quadratic at fleet size).
func TestReaperWorkPerEventDoesNotGrowWithTheFleet(t *testing.T) {
	waitSmall, delSmall := reapCalls(t, 1)
	waitBig, delBig := reapCalls(t, 400)
	if !maps.Equal(waitSmall, waitBig) || !maps.Equal(delSmall, delBig) {
		t.Fatalf("calls per event grow with the fleet: waiting %v (1 shoot) vs %v (400); deleting %v vs %v",
			waitSmall, waitBig, delSmall, delBig)
	}
	for _, calls := range []map[string]int{waitBig, delBig} {
		if calls["ListManaged"] != 0 {
			t.Errorf("the reaper listed the fleet on a shoot event: %v", calls)
		}
	}
	if waitBig["Get"] != 1 || delBig["Get"] != 2 {
		t.Errorf("reads per event: waiting %v, deleting %v; want one cached read, plus one live read before a deletion", waitBig, delBig)
	}
}
