package shoot

import (
	"maps"
	"net/netip"
	"slices"
	"time"
)

// mergeZones keeps the current zones in their order and appends new ones: Gardener rejects reordering.
func mergeZones(current, desired []string) []string {
	out := slices.Clone(current)
	for _, z := range desired {
		if !slices.Contains(out, z) {
			out = append(out, z)
		}
	}
	return out
}

// zonesOf returns all zones of the pools in order of first appearance.
func zonesOf(workers []WorkerSpec) []string {
	var zones []string
	for _, w := range workers {
		zones = mergeZones(zones, w.Zones)
	}
	return zones
}

func currentWorker(c *Current, name string) *CurrentWorker {
	if c == nil {
		return nil
	}
	for i := range c.Workers {
		if c.Workers[i].Name == name {
			return &c.Workers[i]
		}
	}
	return nil
}

// isLegacyAzure reports an existing Azure cluster whose infrastructure has no zones: it stays as it is.
func isLegacyAzure(in input) bool {
	return in.rt.Provider == Azure && in.current != nil && in.current.HasInfrastructureConfig && len(in.current.InfrastructureZones) == 0
}

// nodeStability applies the landscape's node defaults to a pool: gVisor runtimes get net-raw (Istio's sidecars
// need raw sockets) unless the Runtime sets the flag, maxPods is clamped to what one node's pod CIDR (a /24, or the
// whole pods CIDR when smaller) can address, and machine drain timeout and eviction retries get the configured
// defaults when neither the pool nor the existing cluster's pool sets them (a value an operator set on the
// cluster is not overwritten by a default).
func nodeStability(in input, w *Worker, cur *CurrentWorker) error {
	for i := range w.ContainerRuntimes {
		cr := &w.ContainerRuntimes[i]
		if cr.Type != ContainerRuntimeGVisor {
			continue
		}
		if _, set := cr.ConfigFlags[GVisorNetRawFlag]; !set {
			if cr.ConfigFlags == nil {
				cr.ConfigFlags = map[string]string{}
			}
			cr.ConfigFlags[GVisorNetRawFlag] = "true"
		}
	}
	if w.MaxPods != nil {
		if limit := maxPodsPerNode(in.rt.Networking.Pods); *w.MaxPods > limit {
			*w.MaxPods = limit
		}
	}
	d := in.cfg.Workers
	if cur != nil {
		if d.MachineDrainTimeout == "" || cur.MachineDrainTimeout != "" {
			d.MachineDrainTimeout = cur.MachineDrainTimeout
		}
		if cur.MaxEvictRetries != nil {
			d.MaxEvictRetries = cur.MaxEvictRetries
		}
	}
	if w.MachineDrainTimeout == "" && d.MachineDrainTimeout != "" {
		if _, err := time.ParseDuration(d.MachineDrainTimeout); err != nil {
			return invalid(ReasonInvalidConfig, "shoot.workers.machineDrainTimeout", "%q is not a duration", d.MachineDrainTimeout)
		}
		w.MachineDrainTimeout = d.MachineDrainTimeout
	}
	if w.MaxEvictRetries == nil && d.MaxEvictRetries != nil {
		v := *d.MaxEvictRetries
		w.MaxEvictRetries = &v
	}
	return nil
}

// maxPodsPerNode is the number of usable addresses of a node's pod CIDR: a /24, or the pods CIDR when it is
// smaller. An unparsable pods CIDR (rejected later by the networking step) counts as /24.
func maxPodsPerNode(pods string) int32 {
	bits := perNodePodsCIDRBits
	if p, err := netip.ParsePrefix(pods); err == nil && p.Addr().Is4() && p.Bits() > bits {
		bits = p.Bits()
	}
	return int32(usableIPv4(bits)) //nolint:gosec // G115: bits >= 24 here, at most 254 addresses
}

func cloneWorker(w Worker) Worker {
	w.Zones = slices.Clone(w.Zones)
	w.Labels = maps.Clone(w.Labels)
	w.Annotations = maps.Clone(w.Annotations)
	w.Taints = slices.Clone(w.Taints)
	if w.MaxPods != nil {
		v := *w.MaxPods
		w.MaxPods = &v
	}
	if w.MaxEvictRetries != nil {
		v := *w.MaxEvictRetries
		w.MaxEvictRetries = &v
	}
	w.ContainerRuntimes = slices.Clone(w.ContainerRuntimes)
	for i := range w.ContainerRuntimes {
		w.ContainerRuntimes[i].ConfigFlags = maps.Clone(w.ContainerRuntimes[i].ConfigFlags)
	}
	w.Raw = slices.Clone(w.Raw)
	return w
}
