package fake

import (
	"context"
	"slices"

	"github.com/kyma-project/kim/core/ports"
)

var _ ports.CloudProfiles = (*Garden)(nil)

// SetRegionZones makes the cloud profile offer zones (in this order) in region; no zones removes the region.
func (g *Garden) SetRegionZones(profile, region string, zones ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(zones) == 0 {
		delete(g.profileZones, profile+"/"+region)
		return
	}
	g.profileZones[profile+"/"+region] = slices.Clone(zones)
}

// RegionZones implements ports.CloudProfiles.
func (g *Garden) RegionZones(_ context.Context, profile, region string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("RegionZones"); err != nil {
		return nil, err
	}
	return slices.Clone(g.profileZones[profile+"/"+region]), nil
}
