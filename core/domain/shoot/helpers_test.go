package shoot

import (
	"net/netip"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func testConfig() Config {
	return Config{
		Project:                  "kyma-dev",
		DefaultKubernetesVersion: "1.33",
		DefaultMachineImage:      MachineImage{Name: "gardenlinux", Version: "1592.1.0"},
		CloudProfiles:            map[Provider]string{AWS: "aws-kyma"},
		Maintenance: MaintenanceConfig{
			AutoUpdateKubernetesVersion: true, AutoUpdateMachineImageVersion: true,
			Windows: map[string]TimeWindow{"eu-west-1": {Begin: "220000+0000", End: "230000+0000"}},
		},
	}
}

// zonesFor returns n zone names of the provider's test region.
func zonesFor(p Provider, n int) []string {
	var zones []string
	for i := range n {
		switch p {
		case Azure:
			zones = append(zones, string(rune('1'+i)))
		default:
			zones = append(zones, regionFor(p)+string(rune('a'+i)))
		}
	}
	return zones
}

func regionFor(p Provider) string {
	switch p {
	case Azure:
		return "westeurope"
	case GCP:
		return "europe-west3-"
	case OpenStack:
		return "eu-de-1"
	case Alicloud:
		return "eu-central-1"
	default:
		return "eu-west-1"
	}
}

func testRuntime(p Provider) Runtime {
	region := regionFor(p)
	if p == GCP {
		region = "europe-west3"
	}
	return Runtime{
		ID: "91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43", Generation: 3,
		GlobalAccountID: "ga-1", SubaccountID: "sa-1",
		Name: "c-91f0e7a", Purpose: "evaluation", PlatformRegion: "cf-eu10", Region: region,
		CredentialsBinding: "binding-1", KubernetesVersion: "1.33", Provider: p,
		Workers: []Worker{{
			Name: "cpu-worker-0", MachineType: "m6i.large", ImageName: "gardenlinux",
			Minimum: 1, Maximum: 3, MaxSurge: "1", MaxUnavailable: "0",
			VolumeType: "gp3", VolumeSize: "80Gi", Zones: zonesFor(p, 1),
		}},
		Networking: Networking{Type: "calico", Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.104.0.0/13"},
	}
}

type netipPrefix = netip.Prefix

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
