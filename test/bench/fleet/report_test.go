package main

import (
	"math"
	"testing"
	"time"
)

// TestPerEventSubtractsTheMeanIdleRate: 100 events in a 100 s window with 3 s of CPU; idle 0.01 s/s before and
// 0.02 after. Net of the mean rate (0.015) that is 15 ms per event; with the rates alone 10 and 20 ms.
func TestPerEventSubtractsTheMeanIdleRate(t *testing.T) {
	s := steadyResult{events: 100, window: 100 * time.Second, cpu: 3 * time.Second,
		idleCPU: 600 * time.Millisecond, idleAfterCPU: 1200 * time.Millisecond}
	got := s.perEvent(time.Minute)
	want := eventCost{before: 0.01, after: 0.02, mid: 0.015, low: 0.01, high: 0.02}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"before", got.before, want.before}, {"after", got.after, want.after}, {"mid", got.mid, want.mid},
		{"low", got.low, want.low}, {"high", got.high, want.high}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Without a baseline after the window, the one before stands alone.
	s.idleAfterCPU = 0
	if got := s.perEvent(time.Minute); math.Abs(got.mid-0.02) > 1e-9 || got.low != got.high {
		t.Errorf("one baseline: %+v, want mid = low = high = 20 ms", got)
	}
}
