package catalogue

import (
	"fmt"
	"slices"
)

// KEBSource is the commit of github.com/kyma-project/kyma-environment-broker every value of this file was read
// from. Re-read the files named below at a newer commit to update them.
const KEBSource = "kyma-project/kyma-environment-broker@bf89c5d51"

// kebSizes are the AWS and Alibaba size suffixes KEB offers, with their vCPUs (KEB
// cmd/broker/testdata/providers.yaml, display names).
var kebSizes = []struct {
	suffix string
	cpu    int
}{{"large", 2}, {"xlarge", 4}, {"2xlarge", 8}, {"4xlarge", 16}, {"8xlarge", 32}, {"12xlarge", 48}, {"16xlarge", 64}}

// family lists prefix+size for every KEB size, with memPerCPU GiB per vCPU.
func family(prefix string, memPerCPU int) []MachineType {
	out := make([]MachineType, 0, len(kebSizes))
	for _, s := range kebSizes {
		out = append(out, sized(prefix+s.suffix, s.cpu, s.cpu*memPerCPU, 0))
	}
	return out
}

func sized(name string, cpu, memGi, gpu int) MachineType {
	mt := MachineType{Name: name, CPU: fmt.Sprint(cpu), Memory: fmt.Sprintf("%dGi", memGi)}
	if gpu > 0 {
		mt.GPU = fmt.Sprint(gpu)
	}
	return mt
}

// gpuFamily is an AWS GPU family: KEB's display names give 4 GPUs to the 12xlarge size and one to the others.
func gpuFamily(prefix string) []MachineType {
	out := family(prefix, 4)
	for i := range out {
		out[i].GPU = "1"
		if out[i].Name == prefix+"12xlarge" {
			out[i].GPU = "4"
		}
	}
	return out
}

// kebMachineTypes are the machine types KEB sends per Gardener provider type: every name of its providers
// configuration's `machines`, with the version-agnostic names resolved through `machinesVersions`
// (`mi.{size}` -> `m7i.{size}`, `ri.{size}` -> `r8i.{size}`): KEB's create and update steps send the resolved name
// (internal/process/provisioning/create_runtime_resource_step.go, internal/process/update/update_runtime_step.go).
// Source: cmd/broker/testdata/providers.yaml and plans.yaml; the defaults of internal/provider/*.go (trial
// mi.xlarge, free mi.xlarge, Standard_D4s_v5, n2-standard-4, ecs.g9i.large, g_c2_m8, n3-standard-2-gdc) are among them.
func kebMachineTypes() map[string][]MachineType {
	aws := slices.Concat(family("m7i.", 4), family("m6i.", 4), family("m5.", 4), family("c7i.", 2),
		gpuFamily("g6."), gpuFamily("g4dn."), family("r8i.", 8))
	var azure []MachineType
	for _, c := range []int{2, 4, 8, 16, 32, 48, 64} {
		azure = append(azure, sized(fmt.Sprintf("Standard_D%ds_v5", c), c, 4*c, 0), sized(fmt.Sprintf("Standard_F%ds_v2", c), c, 2*c, 0))
		if c > 2 {
			azure = append(azure, sized(fmt.Sprintf("Standard_D%d_v3", c), c, 4*c, 0))
		}
	}
	azure = append(azure, sized("Standard_NC4as_T4_v3", 4, 28, 1), sized("Standard_NC8as_T4_v3", 8, 56, 1),
		sized("Standard_NC16as_T4_v3", 16, 110, 1), sized("Standard_NC64as_T4_v3", 64, 440, 4))
	var gcp []MachineType
	for _, c := range []int{2, 4, 8, 16, 32, 48, 64} {
		gcp = append(gcp, sized(fmt.Sprintf("n2-standard-%d", c), c, 4*c, 0))
	}
	for _, c := range []int{2, 4, 8, 16, 32, 56} {
		gcp = append(gcp, sized(fmt.Sprintf("c2d-highcpu-%d", c), c, 2*c, 0))
	}
	for _, g := range [][2]int{{4, 1}, {8, 1}, {12, 1}, {16, 1}, {24, 2}, {32, 1}, {48, 4}} {
		gcp = append(gcp, sized(fmt.Sprintf("g2-standard-%d", g[0]), g[0], 4*g[0], g[1]))
	}
	var openstack, gdch []MachineType
	for _, c := range []int{2, 4, 6, 8, 12, 16, 32, 64} {
		openstack = append(openstack, sized(fmt.Sprintf("g_c%d_m%d", c, 4*c), c, 4*c, 0))
	}
	for _, c := range []int{2, 4, 8, 16, 32, 64} {
		gdch = append(gdch, sized(fmt.Sprintf("n3-standard-%d-gdc", c), c, 4*c, 0))
	}
	return map[string][]MachineType{
		"aws": aws, "azure": azure, "gcp": gcp, "openstack": openstack, "alicloud": family("ecs.g9i.", 4), "gdch": gdch,
	}
}

// kebRegions are the regions and zones KEB sends per Gardener provider type, zone names as KEB builds them
// (internal/provider/zones.go FullZoneName: aws, openstack and alicloud regions ending in a digit append the letter,
// gcp and gdch append "-letter", azure sends the number). Source: the `regions` of cmd/broker/testdata/providers.yaml;
// plus the hard-coded trial and free regions of internal/provider/{aws,azure,gcp}.go (aws eu-west-1, us-east-1,
// ap-southeast-1; azure westeurope, eastus, southeastasia, switzerlandnorth; gcp europe-west3, us-central1,
// asia-south1, me-central2), which KEB's providers configuration need not list; and the zone letters of
// internal/provider/zones.go for sap-converged-cloud (ap-ae-1: a, b).
func kebRegions() map[string][]Region {
	abc := []string{"a", "b", "c"}
	num := []string{"1", "2", "3"}
	awsZones := map[string][]string{
		"eu-central-1": abc, "eu-west-2": abc, "ca-central-1": {"a", "b", "d"}, "sa-east-1": abc,
		"us-east-1": {"a", "b", "c", "d", "f"}, "us-west-2": {"a", "b", "c", "d"}, "ap-northeast-1": abc,
		"ap-northeast-2": abc, "ap-south-1": abc, "ap-southeast-1": abc, "ap-southeast-2": abc, "eu-west-1": abc,
	}
	azure := []string{"eastus", "centralus", "westus2", "uksouth", "northeurope", "westeurope", "japaneast",
		"southeastasia", "australiaeast", "brazilsouth", "canadacentral", "switzerlandnorth"}
	gcp := []string{"europe-west3", "asia-south1", "us-central1", "me-central2", "asia-northeast2", "me-west1",
		"southamerica-east1", "australia-southeast1", "asia-northeast1", "asia-southeast1", "us-west1", "us-east4", "europe-west4"}
	openstackZones := map[string][]string{
		"eu-de-1": {"a", "b", "d"}, "eu-de-2": {"a", "b"}, "ap-au-1": {"a", "b"}, "na-us-1": {"a", "b", "d"},
		"na-us-2": {"a", "b"}, "ap-jp-1": {"a"}, "ap-ae-1": {"a", "b"},
	}
	alicloudZones := map[string][]string{"ap-southeast-1": abc, "eu-central-1": abc, "eu-west-1": {"a", "b"}}
	out := map[string][]Region{}
	for _, r := range sortedKeys(awsZones) {
		out["aws"] = append(out["aws"], zones(r, awsZones[r]...))
	}
	for _, r := range azure {
		out["azure"] = append(out["azure"], plain(r, num...))
	}
	for _, r := range gcp {
		out["gcp"] = append(out["gcp"], zones(r, "-a", "-b", "-c"))
	}
	for _, r := range sortedKeys(openstackZones) {
		out["openstack"] = append(out["openstack"], zones(r, openstackZones[r]...))
	}
	for _, r := range sortedKeys(alicloudZones) {
		out["alicloud"] = append(out["alicloud"], zones(r, alicloudZones[r]...))
	}
	out["gdch"] = []Region{zones("us-west16", "-a", "-b", "-c")}
	return out
}

// kebVolumeTypes are the volume types KEB's provider values send (internal/provider/*.go DiskType: aws gp3, azure
// StandardSSD_LRS and Standard_LRS for trial and free, gcp pd-balanced and pd-standard for trial, alicloud
// cloud_essd, gdch Standard; sap-converged-cloud sends none).
var kebVolumeTypes = map[string][]string{
	"aws": {"gp3"}, "azure": {"StandardSSD_LRS", "Standard_LRS"}, "gcp": {"pd-balanced", "pd-standard"},
	"alicloud": {"cloud_essd"}, "gdch": {"Standard"},
}

// withKEB adds to every provider of c what KEB can send for it (kebMachineTypes, kebRegions, kebVolumeTypes),
// keeping what c already has (values of older KEB versions that runtimes created then still carry).
func withKEB(c Catalogue) Catalogue {
	machines, regions := kebMachineTypes(), kebRegions()
	for i := range c.Providers {
		p := &c.Providers[i]
		for _, mt := range machines[p.Type] {
			if !slices.ContainsFunc(p.MachineTypes, func(o MachineType) bool { return o.Name == mt.Name }) {
				p.MachineTypes = append(p.MachineTypes, mt)
			}
		}
		for _, r := range regions[p.Type] {
			j := slices.IndexFunc(p.Regions, func(o Region) bool { return o.Name == r.Name })
			if j < 0 {
				p.Regions = append(p.Regions, r)
				continue
			}
			for _, z := range r.Zones {
				if !slices.Contains(p.Regions[j].Zones, z) {
					p.Regions[j].Zones = append(p.Regions[j].Zones, z)
				}
			}
		}
		for _, v := range kebVolumeTypes[p.Type] {
			if !slices.Contains(p.VolumeTypes, v) {
				p.VolumeTypes = append(p.VolumeTypes, v)
			}
		}
	}
	return c
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
