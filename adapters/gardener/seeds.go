package gardener

import (
	"context"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// Seed regions are cached: seeds do not move, and every runtime's provisioning info names its seed's region. The
// whole list is read at most once per seedRefresh, and again at most once per seedMissRefresh for a seed it does
// not know yet (a new seed), so a burst of runtimes costs one request.
const (
	seedRefresh     = 10 * time.Minute
	seedMissRefresh = 30 * time.Second
)

// seedRegions maps seed names to regions; the zero value is empty and ready to use.
type seedRegions struct {
	mu       sync.Mutex
	regions  map[string]string
	listedAt time.Time
}

// SeedRegion implements ports.Seeds.
func (c *Shoots) SeedRegion(ctx context.Context, seedName string) (string, error) {
	c.seeds.mu.Lock()
	defer c.seeds.mu.Unlock()
	region, known := c.seeds.regions[seedName]
	age := time.Since(c.seeds.listedAt)
	if (known && age < seedRefresh) || (!known && age < seedMissRefresh) {
		return region, nil
	}
	seeds := &gardencorev1beta1.SeedList{}
	err := c.Live.List(ctx, seeds)
	if err := c.record("list", classify("list seeds", err)); err != nil {
		if known {
			return region, nil // a region seen before is still right
		}
		return "", err
	}
	c.seeds.regions = make(map[string]string, len(seeds.Items))
	for _, s := range seeds.Items {
		c.seeds.regions[s.Name] = s.Spec.Provider.Region
	}
	c.seeds.listedAt = time.Now()
	return c.seeds.regions[seedName], nil
}
