package shoot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func awsCurrent() Current {
	return Current{
		KubernetesVersion: "1.33.5",
		Workers: []CurrentWorker{
			{Name: "cpu-worker-0", ImageName: "gardenlinux", ImageVersion: "1592.4.0", Zones: []string{"eu-west-1b", "eu-west-1a"}},
			{Name: "old-pool", ImageName: "gardenlinux", ImageVersion: "1592.4.0", Zones: []string{"eu-west-1b"}},
		},
		HasInfrastructureConfig: true,
		InfrastructureZones: []CurrentZone{
			{Name: "eu-west-1b", CIDRs: []string{"10.250.0.0/19", "10.250.32.0/20", "10.250.48.0/20"}},
			{Name: "eu-west-1a", CIDRs: []string{"10.250.64.0/19", "10.250.96.0/20", "10.250.112.0/20"}},
		},
	}
}

func TestUpdateKeepsZoneOrderAndAppendsNewZones(t *testing.T) {
	rt := testRuntime(AWS)
	rt.Workers[0].Zones = []string{"eu-west-1a", "eu-west-1c", "eu-west-1b"}
	got, err := GenerateUpdate(rt, testConfig(), awsCurrent())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"eu-west-1b", "eu-west-1a", "eu-west-1c"}, got.Workers[0].Zones); diff != "" {
		t.Errorf("worker zones (-want +got):\n%s", diff)
	}
	want := &AWSInfrastructure{VPCCIDR: "10.250.0.0/16", Zones: []AWSZone{
		{Name: "eu-west-1b", Workers: "10.250.0.0/19", Public: "10.250.32.0/20", Internal: "10.250.48.0/20"},
		{Name: "eu-west-1a", Workers: "10.250.64.0/19", Public: "10.250.96.0/20", Internal: "10.250.112.0/20"},
		{Name: "eu-west-1c", Workers: "10.250.128.0/19", Public: "10.250.160.0/20", Internal: "10.250.176.0/20"},
	}}
	if diff := cmp.Diff(want, got.Provider.Infrastructure.AWS); diff != "" {
		t.Errorf("infrastructure (-want +got):\n%s", diff)
	}
	if got.Provider.KeepInfrastructure {
		t.Error("a new zone must regenerate the infrastructure config")
	}
}

func TestUpdateWithoutNewZonesKeepsInfrastructure(t *testing.T) {
	rt := testRuntime(AWS)
	rt.Workers[0].Zones = []string{"eu-west-1a"}
	got, err := GenerateUpdate(rt, testConfig(), awsCurrent())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Provider.KeepInfrastructure {
		t.Error("without new zones the current infrastructure config must be kept")
	}
	if diff := cmp.Diff([]string{"eu-west-1b", "eu-west-1a"}, got.Workers[0].Zones); diff != "" {
		t.Errorf("zones of an existing pool are kept (-want +got):\n%s", diff)
	}
}

func TestUpdateNeverDowngrades(t *testing.T) {
	cases := []struct {
		reason                string
		k8s, image, imageName string
		wantK8s, wantImage    string
	}{
		{"older desired versions keep the current ones", "1.32", "1592.1.0", "", "1.33.5", "1592.4.0"},
		{"empty image version keeps current, default is older", "1.33", "", "", "1.33.5", "1592.4.0"},
		{"newer desired versions win", "1.34", "1700.0.0", "", "1.34", "1700.0.0"},
		{"another image name takes the desired version", "1.33", "24.4.0", "ubuntu", "1.33.5", "24.4.0"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.KubernetesVersion = tc.k8s
			rt.Workers[0].ImageVersion = tc.image
			rt.Workers[0].ImageName = tc.imageName
			got, err := GenerateUpdate(rt, testConfig(), awsCurrent())
			if err != nil {
				t.Fatal(err)
			}
			if got.KubernetesVersion != tc.wantK8s || got.Workers[0].ImageVersion != tc.wantImage {
				t.Errorf("want %s/%s, got %s/%s", tc.wantK8s, tc.wantImage, got.KubernetesVersion, got.Workers[0].ImageVersion)
			}
		})
	}
}

func TestUpdateRemovesRemovedPoolAndAddsNewPool(t *testing.T) {
	rt := testRuntime(AWS)
	rt.Workers = append(rt.Workers, Worker{Name: "new-pool", MachineType: "m6i.xlarge", Minimum: 1, Maximum: 2, Zones: []string{"eu-west-1a"}})
	got, err := GenerateUpdate(rt, testConfig(), awsCurrent())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range got.Workers {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"cpu-worker-0", "new-pool"}, names); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	if v := got.Workers[1].ImageVersion; v != "1592.1.0" {
		t.Errorf("a new pool gets the default image version, got %q", v)
	}
}

func TestUpdateKeepsLegacyZonelessAzure(t *testing.T) {
	rt := testRuntime(Azure)
	rt.Workers[0].Zones = []string{"1", "2"}
	rt.Workers = append(rt.Workers, Worker{Name: "extra", MachineType: "Standard_D4", Minimum: 1, Maximum: 1, Zones: []string{"1"}})
	current := Current{
		KubernetesVersion:       "1.33.5",
		Workers:                 []CurrentWorker{{Name: "cpu-worker-0", ImageName: "gardenlinux", ImageVersion: "1592.4.0"}},
		HasInfrastructureConfig: true,
	}
	got, err := GenerateUpdate(rt, testConfig(), current)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Provider.KeepInfrastructure {
		t.Error("legacy azure infrastructure must be kept")
	}
	for _, w := range got.Workers {
		if len(w.Zones) != 0 {
			t.Errorf("pool %s of a zone-less cluster must stay zone-less, got %v", w.Name, w.Zones)
		}
	}
}

func TestUpdateOfAzureAddsZoneWithFreeSubnet(t *testing.T) {
	rt := testRuntime(Azure)
	rt.Workers[0].Zones = []string{"1", "3"}
	current := Current{
		KubernetesVersion:       "1.33.5",
		Workers:                 []CurrentWorker{{Name: "cpu-worker-0", ImageName: "gardenlinux", ImageVersion: "1592.4.0", Zones: []string{"1"}}},
		HasInfrastructureConfig: true,
		InfrastructureZones:     []CurrentZone{{Name: "1", CIDRs: []string{"10.250.0.0/19"}}},
	}
	got, err := GenerateUpdate(rt, testConfig(), current)
	if err != nil {
		t.Fatal(err)
	}
	want := []AzureZone{
		{Name: 1, CIDR: "10.250.0.0/19", NATGatewayEnabled: true, NATIdleTimeoutMinutes: 4},
		{Name: 3, CIDR: "10.250.32.0/19", NATGatewayEnabled: true, NATIdleTimeoutMinutes: 4},
	}
	if diff := cmp.Diff(want, got.Provider.Infrastructure.Azure.Zones); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
