package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Parallel runs do(0..n-1) on workers goroutines and returns the first error.
func Parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := do(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// Reaches is a polling condition: count reaches want (what it saw, or the error, describes the progress).
func Reaches(count func() (int, error), want int) func() (bool, string) {
	return func() (bool, string) {
		n, err := count()
		if err != nil {
			return false, fmt.Sprintf("%d/%d (%v)", n, want, err)
		}
		return n >= want, fmt.Sprintf("%d/%d", n, want)
	}
}

// ProgressLog logs the progress of a poll.
func ProgressLog(what, seen string) { Logf("%s: %s", what, seen) }
