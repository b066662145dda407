package shoot

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// MaxZones is the largest number of zones a cluster can span.
const MaxZones = 8

// Nodes CIDR prefix bounds: smaller than /16 wastes address space the layouts cannot use; larger
// than /24 leaves zone subnets too small for nodes.
const (
	MinNodesPrefixBits = 16
	MaxNodesPrefixBits = 24
)

// carver hands out consecutive, naturally aligned IPv4 blocks from a parent prefix.
type carver struct {
	parent netip.Prefix
	next   uint32 // offset from the parent's first address
}

func newCarver(parent netip.Prefix) *carver { return &carver{parent: parent.Masked()} }

// take returns the next block of the given prefix length.
func (c *carver) take(bits int) (netip.Prefix, error) {
	base := c.parent.Addr().As4()
	start := binary.BigEndian.Uint32(base[:]) + c.next
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], start)
	p, err := netip.AddrFrom4(b).Prefix(bits)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("carve /%d from %s: %w", bits, c.parent, err)
	}
	if p.Addr() != netip.AddrFrom4(b) || !c.parent.Contains(p.Addr()) || p.Bits() < c.parent.Bits() {
		return netip.Prefix{}, fmt.Errorf("carve /%d from %s: no aligned space left", bits, c.parent)
	}
	c.next += uint32(1) << (32 - bits)
	return p, nil
}

// awsSlots lays out the subnets of all MaxZones AWS zones inside nodes: zones 1-3 get workers
// /p+3, public /p+4 and internal /p+4; zones 4-8 get three /p+6 blocks after them.
func awsSlots(nodes netip.Prefix) ([][3]netip.Prefix, error) {
	c := newCarver(nodes)
	p := nodes.Bits()
	slots := make([][3]netip.Prefix, 0, MaxZones)
	for i := range MaxZones {
		sizes := [3]int{p + 3, p + 4, p + 4}
		if i >= 3 {
			sizes = [3]int{p + 6, p + 6, p + 6}
		}
		var slot [3]netip.Prefix
		for j, bits := range sizes {
			block, err := c.take(bits)
			if err != nil {
				return nil, err
			}
			slot[j] = block
		}
		slots = append(slots, slot)
	}
	return slots, nil
}

// equalSlots splits nodes into MaxZones equal /p+3 blocks (Azure subnets, Alicloud vswitches).
func equalSlots(nodes netip.Prefix) ([][3]netip.Prefix, error) {
	c := newCarver(nodes)
	slots := make([][3]netip.Prefix, 0, MaxZones)
	for range MaxZones {
		block, err := c.take(nodes.Bits() + 3)
		if err != nil {
			return nil, err
		}
		slots = append(slots, [3]netip.Prefix{block})
	}
	return slots, nil
}

// assignSlots gives each zone of want a layout slot. Zones in used keep their existing CIDRs (the
// caller keeps them); every other zone takes the first free slot that overlaps no CIDR in use, so
// zones added to an existing cluster never collide with subnets created earlier, whatever layout
// those followed.
func assignSlots(slots [][3]netip.Prefix, want []string, used map[string][]netip.Prefix) (map[string][3]netip.Prefix, error) {
	var taken []netip.Prefix
	for _, zone := range want {
		taken = append(taken, used[zone]...)
	}
	out := make(map[string][3]netip.Prefix, len(want))
	next := 0
	for _, zone := range want {
		if _, ok := used[zone]; ok {
			continue
		}
		found := false
		for ; next < len(slots) && !found; next++ {
			if slotFree(slots[next], taken) {
				out[zone] = slots[next]
				found = true
			}
		}
		if !found {
			return nil, invalid(ReasonNoFreeZoneCIDR, "spec.shoot.networking.nodes",
				"no free subnet left in the nodes CIDR for zone %q; the existing zones use an incompatible layout", zone)
		}
	}
	return out, nil
}

func slotFree(slot [3]netip.Prefix, taken []netip.Prefix) bool {
	for _, s := range slot {
		if !s.IsValid() {
			continue
		}
		for _, t := range taken {
			if s.Overlaps(t) {
				return false
			}
		}
	}
	return true
}

// parseNodes parses and checks the nodes CIDR every provider layout derives from.
func parseNodes(cidr string) (netip.Prefix, error) {
	const field = "spec.shoot.networking.nodes"
	if cidr == "" {
		return netip.Prefix{}, invalid(ReasonMissingField, field, "the nodes CIDR must be set")
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, invalid(ReasonInvalidCIDR, field, "%q is not an IPv4 CIDR", cidr)
	}
	if p.Masked() != p {
		return netip.Prefix{}, invalid(ReasonInvalidCIDR, field, "%q has host bits set; use %s", cidr, p.Masked())
	}
	if p.Bits() < MinNodesPrefixBits || p.Bits() > MaxNodesPrefixBits {
		return netip.Prefix{}, invalid(ReasonNodesPrefixOutOfRange, field,
			"nodes prefix /%d is outside /%d../%d", p.Bits(), MinNodesPrefixBits, MaxNodesPrefixBits)
	}
	return p, nil
}
