package shoot

import (
	"net/netip"
	"slices"
	"strconv"
)

// Azure NAT gateway settings for every zone.
const azureNATIdleTimeoutMinutes = 4

// stepInfrastructure derives the provider infrastructure and control plane intent from the nodes
// CIDR and the zones the workers step settled on.
func stepInfrastructure(in input, s *Spec) error {
	nodes, err := parseNodes(in.rt.Networking.Nodes)
	if err != nil {
		return err
	}
	zones := infraZones(in, zonesOf(s.Workers))
	used := map[string][]netip.Prefix{}
	if in.current != nil {
		for _, z := range in.current.InfrastructureZones {
			used[z.Name] = parsePrefixes(z.CIDRs)
		}
		s.Provider.KeepInfrastructure = in.current.HasInfrastructureConfig && !addsZones(in.current, zones)
	}
	switch in.rt.Provider {
	case AWS:
		assigned, err := zoneLayout(awsSlots, nodes, zones, used)
		if err != nil {
			return err
		}
		infra := &AWSInfrastructure{VPCCIDR: nodes.String()}
		for _, z := range zones {
			c := zoneCIDRs(z, assigned, used, 3)
			infra.Zones = append(infra.Zones, AWSZone{Name: z, Workers: c[0], Public: c[1], Internal: c[2]})
		}
		s.Provider.Infrastructure.AWS = infra
	case Azure:
		infra := &AzureInfrastructure{VNetCIDR: nodes.String(), Zoned: len(zones) > 0}
		if isLegacyAzure(in) {
			infra.Zoned = false
			s.Provider.KeepInfrastructure = true
		}
		assigned, err := zoneLayout(equalSlots, nodes, zones, used)
		if err != nil {
			return err
		}
		for _, z := range zones {
			n, _ := strconv.Atoi(z)
			name := int32(n) //nolint:gosec // G109: validated by the workers step (Azure zones 1-3)
			infra.Zones = append(infra.Zones, AzureZone{
				Name: name, CIDR: zoneCIDRs(z, assigned, used, 1)[0],
				NATGatewayEnabled: true, NATIdleTimeoutMinutes: azureNATIdleTimeoutMinutes,
			})
		}
		s.Provider.Infrastructure.Azure = infra
	case GCP:
		s.Provider.Infrastructure.GCP = &GCPInfrastructure{WorkersCIDR: nodes.String()}
		if len(zones) > 0 {
			s.Provider.ControlPlane.GCPZone = zones[0]
		}
	case OpenStack:
		pool, lb := in.cfg.OpenStack.FloatingPoolName, in.cfg.OpenStack.LoadBalancerProvider
		if pool == "" {
			pool = DefaultFloatingPoolName
		}
		if lb == "" {
			lb = DefaultLoadBalancerProvider
		}
		s.Provider.Infrastructure.OpenStack = &OpenStackInfrastructure{FloatingPoolName: pool, WorkersCIDR: nodes.String()}
		s.Provider.ControlPlane.OpenStackLoadBalancerProvider = lb
	case Alicloud:
		assigned, err := zoneLayout(equalSlots, nodes, zones, used)
		if err != nil {
			return err
		}
		infra := &AlicloudInfrastructure{VPCCIDR: nodes.String()}
		for _, z := range zones {
			infra.Zones = append(infra.Zones, AlicloudZone{Name: z, Workers: zoneCIDRs(z, assigned, used, 1)[0]})
		}
		s.Provider.Infrastructure.Alicloud = infra
	case GDCH:
		infra, err := gdchInfrastructure(in, nodes, zones, used)
		if err != nil {
			return err
		}
		s.Provider.Infrastructure.GDCH = infra
	}
	return nil
}

// zoneLayout lays out all slots of the nodes CIDR and assigns them to the zones that need one.
func zoneLayout(slotsOf func(netip.Prefix) ([][3]netip.Prefix, error), nodes netip.Prefix, zones []string,
	used map[string][]netip.Prefix) (map[string][3]netip.Prefix, error) {
	slots, err := slotsOf(nodes)
	if err != nil {
		return nil, err
	}
	return assignSlots(slots, zones, used)
}

// infraZones orders the infrastructure zones: on update the current infrastructure zones first
// (they can be neither reordered nor removed), then zones new to the cluster.
func infraZones(in input, workerZones []string) []string {
	if in.current == nil || len(in.current.InfrastructureZones) == 0 {
		return workerZones
	}
	var current []string
	for _, z := range in.current.InfrastructureZones {
		current = mergeZones(current, []string{z.Name}) // a zone listed twice counts once
	}
	return mergeZones(current, workerZones)
}

func addsZones(c *Current, zones []string) bool {
	known := map[string]bool{}
	for _, z := range c.InfrastructureZones {
		known[z.Name] = true
	}
	for _, z := range zones {
		if !known[z] {
			return true
		}
	}
	return false
}

// zoneCIDRs returns the n subnets of zone: the existing ones when the zone already exists.
func zoneCIDRs(zone string, assigned map[string][3]netip.Prefix, used map[string][]netip.Prefix, n int) []string {
	out := make([]string, n)
	if cur, ok := used[zone]; ok {
		for i := range min(n, len(cur)) {
			out[i] = cur[i].String()
		}
		return out
	}
	slot := assigned[zone]
	for i := range n {
		out[i] = slot[i].String()
	}
	return out
}

func parsePrefixes(cidrs []string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// stepNetworking checks the cluster CIDRs: pods, services and nodes must be valid and disjoint.
// minPodsCIDRBits is the shortest pods CIDR prefix accepted.
const minPodsCIDRBits = 2

func stepNetworking(in input, s *Spec) error {
	n := in.rt.Networking
	nodes, err := parseNodes(n.Nodes)
	if err != nil {
		return err
	}
	type named struct {
		name   string
		prefix netip.Prefix
	}
	prefixes := []named{{"nodes", nodes}}
	for _, f := range []struct{ name, value string }{{"pods", n.Pods}, {"services", n.Services}} {
		if f.value == "" {
			continue // Gardener or the provider defaults it
		}
		p, err := netip.ParsePrefix(f.value)
		if err != nil || p.Masked() != p {
			return invalid(ReasonInvalidCIDR, "spec.shoot.networking."+f.name, "%q is not a CIDR without host bits", f.value)
		}
		if f.name == "pods" && (!p.Addr().Is4() || p.Bits() < minPodsCIDRBits) {
			// Refused as the previous infrastructure manager refuses it: an IPv6 pods CIDR (dual-stack adds IPv6 by
			// itself) or a /0 or /1 cannot be divided into node ranges, and Gardener would fail later less clearly.
			return invalid(ReasonInvalidCIDR, "spec.shoot.networking.pods",
				"%q must be an IPv4 CIDR with a prefix of /%d or longer", f.value, minPodsCIDRBits)
		}
		for _, q := range prefixes {
			if p.Overlaps(q.prefix) {
				return invalid(ReasonOverlappingCIDRs, "spec.shoot.networking."+f.name, "%s overlaps the %s CIDR %s", p, q.name, q.prefix)
			}
		}
		prefixes = append(prefixes, named{f.name, p})
	}
	typ := n.Type
	if typ == "" {
		typ = "calico"
	}
	if len(typ) > 63 || !dnsLabel.MatchString(typ) {
		return invalid(ReasonInvalidCIDR, "spec.shoot.networking.type", "%q is not a valid networking type", typ)
	}
	s.Networking = NetworkingSpec{Type: typ, Pods: n.Pods, Nodes: n.Nodes, Services: n.Services,
		// GDCH routes no pod networks between nodes: calico tunnels them (VXLAN overlay).
		CalicoVXLAN: in.rt.Provider == GDCH && typ == "calico"}
	return nil
}

// DualStackApplies says whether a new cluster of provider gets dual-stack networking: requested, supported by the
// provider's extension (DualStackCapableProviders) and enabled by the landscape (enabled).
func DualStackApplies(provider Provider, requested bool, enabled []Provider) bool {
	return requested && slices.Contains(DualStackCapableProviders, provider) && slices.Contains(enabled, provider)
}

// stepDualStack gives a new cluster IPv4 and IPv6 when the Runtime asks for it, the provider's extension supports
// it and the landscape enables it (shoot.dualStack.providers); on aws also the VPC's IPv6 and the AWS Load Balancer
// Controller, which dual-stack load balancers need. Elsewhere the request is ignored, as the previous manager did
// (KEB sends dualStack: true wherever its own configuration allows it, which need not match the landscape's):
// the cluster is single-stack and the Runtime is not failed for it. An existing cluster keeps the IP families it
// was created with, whatever the Runtime says now: Gardener cannot switch them.
func stepDualStack(in input, s *Spec) error {
	dual := DualStackApplies(in.rt.Provider, in.rt.Networking.DualStack, in.cfg.DualStack)
	if in.current != nil {
		dual = in.current.DualStack
	}
	if !dual {
		return nil
	}
	s.Networking.IPFamilies = []string{"IPv4", "IPv6"}
	if aws := s.Provider.Infrastructure.AWS; aws != nil {
		aws.DualStack = true
		s.Provider.ControlPlane.AWSLoadBalancerController = true
	}
	return nil
}
