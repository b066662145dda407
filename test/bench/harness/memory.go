package harness

import (
	"context"
	"sync"
	"time"
)

// MemoryPeaks are the highest values a MemorySampler saw.
type MemoryPeaks struct {
	// RSS is the resident set size (VmRSS) sampled; the kernel's own high-water mark is PeakRSS.
	RSS int64
	// HeapInuse is go_memstats_heap_inuse_bytes: live objects and garbage not collected yet.
	HeapInuse float64
	// GCGoal is go_memstats_next_gc_bytes: the heap size the next collection is due at. With GOGC=100 it is twice
	// what was live after the last collection, so GCGoal/2 bounds the live heap from above.
	GCGoal float64
	// Samples is how many samples were taken.
	Samples int
}

// SampleMemory samples the manager's memory every interval until the returned stop is called, which returns the
// peaks. A failed sample is skipped (the manager may be busy); the peaks are of the samples that succeeded.
func SampleMemory(ctx context.Context, m *Manager, interval time.Duration) (stop func() MemoryPeaks) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var p MemoryPeaks
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			rss, errRSS := procStatusBytes(m.cmd.Process.Pid, "VmRSS:")
			s, errScrape := m.Scrape(ctx)
			mu.Lock()
			if errRSS == nil {
				p.RSS = max(p.RSS, rss)
			}
			if errScrape == nil {
				p.HeapInuse = max(p.HeapInuse, s.Sum("go_memstats_heap_inuse_bytes"))
				p.GCGoal = max(p.GCGoal, s.Sum("go_memstats_next_gc_bytes"))
				p.Samples++
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() MemoryPeaks {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return p
	}
}
