package kymaruntime

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestRetryLimiterCapsTheBackoff: a Runtime that failed many times (a runtime API server away for minutes, whatever
// triggered each pass) waits at most the configured delay for its next attempt; another Runtime and a success start
// again from the shortest delay.
func TestRetryLimiterCapsTheBackoff(t *testing.T) {
	const maxDelay = 10 * time.Second
	rl := retryLimiter(maxDelay)
	away := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "away"}}
	var last time.Duration
	for i := range 40 {
		last = rl.When(away)
		if last > maxDelay {
			t.Fatalf("failure %d waits %s, more than the cap %s", i+1, last, maxDelay)
		}
	}
	if last != maxDelay {
		t.Errorf("after 40 failures the delay is %s, want the cap %s", last, maxDelay)
	}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "other"}}
	if d := rl.When(other); d > 10*time.Millisecond {
		t.Errorf("another Runtime's first failure waits %s; the backoff is per Runtime", d)
	}
	rl.Forget(away)
	if d := rl.When(away); d > 10*time.Millisecond {
		t.Errorf("after a success the next failure waits %s, want the shortest delay again", d)
	}
	if retryLimiter(0) != nil {
		t.Error("no cap configured must leave controller-runtime's default limiter (nil)")
	}
}
