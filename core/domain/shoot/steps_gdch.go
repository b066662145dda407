package shoot

import "net/netip"

// GDCH clusters span one to three zones.
const maxGDCHZones = 3

// gdchInfrastructure lays out a GDCH node network: the nodes CIDR split into as many equal subnets as the
// cluster has zones, rounded up to a power of two (1 zone: the whole CIDR, 2: halves, 3: quarters, the first
// three used). Existing zones keep their subnets; a zone added later takes a free block of the new split or is
// refused (ReasonNoFreeZoneCIDR) when the existing subnets leave none.
func gdchInfrastructure(in input, nodes netip.Prefix, zones []string, used map[string][]netip.Prefix) (*GDCHInfrastructure, error) {
	if len(zones) > maxGDCHZones {
		return nil, invalid(ReasonTooManyZones, "spec.shoot.provider.workers", "gdch clusters span at most %d zones, the pools span %d", maxGDCHZones, len(zones))
	}
	ref := in.cfg.GDCH.ParentReference
	if ref.Name == "" {
		return nil, invalid(ReasonInvalidConfig, "shoot.gdch.parentReference.name", "gdch clusters need the parent network configured")
	}
	assigned, err := zoneLayout(gdchSlots(len(zones)), nodes, zones, used)
	if err != nil {
		return nil, err
	}
	infra := &GDCHInfrastructure{EnableEgress: in.cfg.GDCH.EnableEgress, NodeCIDR: nodes.String(),
		ParentReference: GDCHParentReference{Name: ref.Name, Namespace: ref.Namespace, Type: ref.Type}}
	for _, z := range zones {
		infra.Zones = append(infra.Zones, GDCHZone{Name: z, CIDR: zoneCIDRs(z, assigned, used, 1)[0]})
	}
	return infra, nil
}

// gdchSlots returns the layout for n zones: 2^k equal blocks with 2^k >= n.
func gdchSlots(n int) func(netip.Prefix) ([][3]netip.Prefix, error) {
	shift := 0
	for 1<<shift < n {
		shift++
	}
	return func(nodes netip.Prefix) ([][3]netip.Prefix, error) {
		c := newCarver(nodes)
		var slots [][3]netip.Prefix
		for range 1 << shift {
			block, err := c.take(nodes.Bits() + shift)
			if err != nil {
				return nil, err
			}
			slots = append(slots, [3]netip.Prefix{block})
		}
		return slots, nil
	}
}
