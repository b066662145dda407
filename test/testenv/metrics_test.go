package testenv

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// TestBusynessCountsTheQueueWhicheverProviderWon: in this process, as in every test process that links the
// in-process gardener-apiserver, client-go's work-queue metrics went to component-base's registry. busyness read
// only controller-runtime's, so a queue with items counted as idle and WaitIdle returned while work was queued.
func TestBusynessCountsTheQueueWhicheverProviderWon(t *testing.T) {
	const name = "testenv-busyness-probe"
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	got, err := busyness()
	if err != nil {
		t.Fatal(err)
	}
	if got[name] != 2 {
		t.Fatalf("busyness of a queue with 2 items: %v, want 2", got[name])
	}
	for range 2 {
		item, _ := q.Get()
		q.Done(item)
	}
	if got, _ = busyness(); got[name] != 0 {
		t.Errorf("busyness of an emptied queue: %v, want 0", got[name])
	}
}
