package shoot

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func awsZoneTable(n int) []AWSZone {
	all := []AWSZone{
		{Workers: "10.250.0.0/19", Public: "10.250.32.0/20", Internal: "10.250.48.0/20"},
		{Workers: "10.250.64.0/19", Public: "10.250.96.0/20", Internal: "10.250.112.0/20"},
		{Workers: "10.250.128.0/19", Public: "10.250.160.0/20", Internal: "10.250.176.0/20"},
		{Workers: "10.250.192.0/22", Public: "10.250.196.0/22", Internal: "10.250.200.0/22"},
		{Workers: "10.250.204.0/22", Public: "10.250.208.0/22", Internal: "10.250.212.0/22"},
		{Workers: "10.250.216.0/22", Public: "10.250.220.0/22", Internal: "10.250.224.0/22"},
		{Workers: "10.250.228.0/22", Public: "10.250.232.0/22", Internal: "10.250.236.0/22"},
		{Workers: "10.250.240.0/22", Public: "10.250.244.0/22", Internal: "10.250.248.0/22"},
	}
	zones := zonesFor(AWS, n)
	out := make([]AWSZone, n)
	for i := range n {
		out[i] = all[i]
		out[i].Name = zones[i]
	}
	return out
}

func TestAWSLayoutOneToEightZones(t *testing.T) {
	for n := 1; n <= MaxZones; n++ {
		t.Run(fmt.Sprintf("%d zones", n), func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.Workers[0].Zones = zonesFor(AWS, n)
			rt.Workers[0].Maximum = int32(n)
			got, err := Generate(rt, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			want := &AWSInfrastructure{VPCCIDR: "10.250.0.0/16", Zones: awsZoneTable(n)}
			if diff := cmp.Diff(want, got.Provider.Infrastructure.AWS); diff != "" {
				t.Errorf("aws infrastructure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAWSLayoutSmallestNodesPrefix(t *testing.T) {
	slots, err := awsSlots(mustPrefix(t, "10.0.1.0/24"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][3]string{
		0: {"10.0.1.0/27", "10.0.1.32/28", "10.0.1.48/28"},
		2: {"10.0.1.128/27", "10.0.1.160/28", "10.0.1.176/28"},
		3: {"10.0.1.192/30", "10.0.1.196/30", "10.0.1.200/30"},
		7: {"10.0.1.240/30", "10.0.1.244/30", "10.0.1.248/30"},
	}
	for i, w := range want {
		got := [3]string{slots[i][0].String(), slots[i][1].String(), slots[i][2].String()}
		if got != w {
			t.Errorf("zone %d: want %v, got %v", i+1, w, got)
		}
	}
}

func TestAzureLayoutOneToEightZones(t *testing.T) {
	for n := 1; n <= MaxZones; n++ {
		t.Run(fmt.Sprintf("%d zones", n), func(t *testing.T) {
			rt := testRuntime(Azure)
			rt.Workers[0].Zones = zonesFor(Azure, n)
			rt.Workers[0].Maximum = int32(n)
			got, err := Generate(rt, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			want := &AzureInfrastructure{VNetCIDR: "10.250.0.0/16", Zoned: true}
			for i := range n {
				want.Zones = append(want.Zones, AzureZone{
					Name: int32(i + 1), CIDR: fmt.Sprintf("10.250.%d.0/19", 32*i),
					NATGatewayEnabled: true, NATIdleTimeoutMinutes: 4,
				})
			}
			if diff := cmp.Diff(want, got.Provider.Infrastructure.Azure); diff != "" {
				t.Errorf("azure infrastructure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNodes(t *testing.T) {
	cases := []struct {
		reason string
		cidr   string
		want   Reason
	}{
		{"a /16 is the largest allowed network", "10.250.0.0/16", ""},
		{"a /24 is the smallest allowed network", "10.250.0.0/24", ""},
		{"a /15 is too large", "10.250.0.0/15", ReasonNodesPrefixOutOfRange},
		{"a /25 is too small", "10.250.0.0/25", ReasonNodesPrefixOutOfRange},
		{"host bits set", "10.250.0.1/16", ReasonInvalidCIDR},
		{"IPv6 is not supported for nodes", "fd00::/64", ReasonInvalidCIDR},
		{"garbage", "ten", ReasonInvalidCIDR},
		{"empty", "", ReasonMissingField},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := parseNodes(tc.cidr)
			if got := reasonOf(err); got != tc.want {
				t.Errorf("want reason %q, got %q (%v)", tc.want, got, err)
			}
		})
	}
}

func TestAssignSlotsSkipsSubnetsInUse(t *testing.T) {
	slots, err := awsSlots(mustPrefix(t, "10.250.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	// An existing zone created by an older layout sits where our second slot would be.
	used := map[string][]netipPrefix{"eu-west-1a": {mustPrefix(t, "10.250.64.0/18")}}
	got, err := assignSlots(slots, []string{"eu-west-1a", "eu-west-1b"}, used)
	if err != nil {
		t.Fatal(err)
	}
	if w := got["eu-west-1b"][0].String(); w != "10.250.0.0/19" {
		t.Errorf("new zone should take the first free slot 10.250.0.0/19, got %s", w)
	}
	if _, ok := got["eu-west-1a"]; ok {
		t.Error("an existing zone must keep its own CIDRs and get no slot")
	}
}

func reasonOf(err error) Reason {
	if ve := AsValidationError(err); ve != nil {
		return ve.Reason
	}
	if err != nil {
		return "untyped: " + Reason(err.Error())
	}
	return ""
}
