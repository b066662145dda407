package shoot

import (
	"slices"
	"strconv"
	"strings"
)

// CloudProfileName is the cloud profile the cluster of rt uses: the one configured for its provider, else the
// default. Empty when neither exists (generation refuses that, ReasonInvalidConfig).
func CloudProfileName(rt Runtime, cfg Config) string {
	if name := cfg.CloudProfiles[rt.Provider]; name != "" {
		return name
	}
	return DefaultCloudProfiles[rt.Provider]
}

// NeedsProfileZones reports whether FillZones needs the cloud profile's zones of the region: some pool of rt has no
// zones and the current cluster (nil: none yet) has no pool of that name with zones to keep.
func NeedsProfileZones(rt Runtime, current *Current) bool {
	for _, w := range rt.Workers {
		if len(w.Zones) > 0 {
			continue
		}
		if cur := currentWorker(current, w.Name); cur == nil || len(cur.Zones) == 0 {
			return true
		}
	}
	return false
}

// FillZones returns rt with zones for every pool that has none (KEB sends such a pool when its providers
// configuration lists no zones for the region; Gardener needs at least one). A pool the current cluster already has
// keeps that pool's zones: Gardener forbids removing a zone from an existing pool, and a cloud profile that changes
// its zone list later must not move a running pool. A new pool gets the first n of profileZones (the region's zones
// in the cloud profile's order, so every reconcile picks the same), n being the pool's maxSurge (KEB sets it to the
// number of zones it meant to use) capped to the zones there are, and at least 1. Pools with zones are unchanged.
// A pool left without zones is a *ValidationError with ReasonNoZonesInCloudProfile; profile names the cloud profile
// for its message.
func FillZones(rt Runtime, current *Current, profile string, profileZones []string) (Runtime, error) {
	if !slices.ContainsFunc(rt.Workers, func(w Worker) bool { return len(w.Zones) == 0 }) {
		return rt, nil
	}
	rt.Workers = slices.Clone(rt.Workers)
	for i := range rt.Workers {
		w := &rt.Workers[i]
		if len(w.Zones) > 0 {
			continue
		}
		if cur := currentWorker(current, w.Name); cur != nil && len(cur.Zones) > 0 {
			w.Zones = slices.Clone(cur.Zones)
			continue
		}
		if len(profileZones) == 0 {
			return rt, invalid(ReasonNoZonesInCloudProfile, workerField(i)+".zones",
				"worker pool %q has no zones and the cloud profile %q offers none in region %q (or does not exist): "+
					"list the region's zones in the cloud profile or in KEB's providers configuration", w.Name, profile, rt.Region)
		}
		w.Zones = slices.Clone(profileZones[:min(surgeZones(w.MaxSurge), len(profileZones))])
	}
	return rt, nil
}

// surgeZones is the number of zones a zone-less pool gets: its maxSurge when that is a positive number, else 1
// (Gardener's default maxSurge; a percentage says nothing about zones).
func surgeZones(maxSurge string) int {
	if strings.HasSuffix(maxSurge, "%") {
		return 1
	}
	if n, err := strconv.Atoi(maxSurge); err == nil && n > 1 {
		return n
	}
	return 1
}
