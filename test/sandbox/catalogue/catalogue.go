// Package catalogue describes the Gardener objects the garden-in-a-box is seeded with: a project, one
// CloudProfile per provider KEB offers, seeds, CredentialsBindings and the ControllerRegistrations the
// gardener-apiserver's admission needs before it accepts a Shoot of a given provider/extension type.
//
// The catalogue is plain data (Catalogue) so tests and the sandbox can extend it before the garden is
// seeded; Objects turns it into API objects and Apply writes them idempotently.
package catalogue

import "github.com/kyma-project/kim/core/domain/wire"

// Catalogue is everything the garden is seeded with.
type Catalogue struct {
	// Project is the Gardener project name; its namespace is "garden-<Project>".
	Project string
	// Providers holds one CloudProfile (plus seeds and credentials) per infrastructure provider.
	Providers []Provider
	// KubernetesVersions are offered by every CloudProfile (full semver, newest patch per minor last or first: order is irrelevant).
	KubernetesVersions []string
	// MachineImages are offered by every CloudProfile.
	MachineImages []MachineImage
	// ExtensionTypes are the `Extension` types a Shoot may list in spec.extensions.
	ExtensionTypes []string
	// NetworkingTypes are the `Network` types (spec.networking.type).
	NetworkingTypes []string
	// DNSProviderTypes are the DNSRecord types a Shoot may use as primary DNS provider.
	DNSProviderTypes []string
	// ContainerRuntimeTypes are additional container runtimes a worker pool may request.
	ContainerRuntimeTypes []string
	// ProjectTolerations are the toleration keys the project allows its shoots (spec.tolerations.whitelist);
	// the admission rejects a shoot tolerating anything else.
	ProjectTolerations []string
	// ExposureClasses are created cluster-wide (handler = name) for shoots that set spec.exposureClassName.
	ExposureClasses []string
	// Secrets are placeholder Secrets in the project namespace that the operator configuration names
	// (DNS provider credentials, audit log credentials): shoots referencing missing ones are rejected.
	Secrets []string
	// AuditPolicyConfigMaps are ConfigMaps in the project namespace holding a minimal audit policy (key
	// "policy"), referenced by kubeAPIServer.auditConfig.auditPolicy.configMapRef.
	AuditPolicyConfigMaps []string
}

// Provider is one infrastructure provider with its CloudProfile content.
type Provider struct {
	// Type is the Gardener provider type (aws, azure, gcp, openstack, alicloud, gdch).
	Type string
	// CloudProfile is the CloudProfile name (e.g. "az" for azure, "converged-cloud-kyma" for openstack).
	CloudProfile string
	// Regions maps region name to its zone names.
	Regions []Region
	// MachineTypes offered in every region.
	MachineTypes []MachineType
	// VolumeTypes offered in every region.
	VolumeTypes []string
	// CredentialsBindings are created in the project namespace, each with its own Secret.
	CredentialsBindings []string
}

// Region is a cloud region and its availability zones.
type Region struct {
	Name  string
	Zones []string
	// AccessRestrictions the region offers (e.g. "eu-access-only"); shoots may only request offered ones.
	AccessRestrictions []string
}

// MachineType is a machine type with its size.
type MachineType struct {
	Name   string
	CPU    string
	Memory string
	GPU    string
}

// MachineImage is an operating system image with its versions.
type MachineImage struct {
	Name     string
	Versions []string
}

// ProjectNamespace is the namespace Gardener uses for the project.
func (c Catalogue) ProjectNamespace() string { return wire.GardenNamespace(c.Project) }

// Provider returns the provider with the given Gardener type.
func (c Catalogue) Provider(providerType string) (Provider, bool) {
	for _, p := range c.Providers {
		if p.Type == providerType {
			return p, true
		}
	}
	return Provider{}, false
}

// SeedName is the name of the seed the catalogue creates for a provider region.
func SeedName(providerType, region string) string { return providerType + "-" + region }

func zones(region string, suffixes ...string) Region {
	r := Region{Name: region}
	for _, s := range suffixes {
		r.Zones = append(r.Zones, region+s)
	}
	return r
}

func plain(region string, names ...string) Region { return Region{Name: region, Zones: names} }

// euAccessOnly is the access restriction of the EU access platform regions (cf-eu11 -> aws eu-central-1,
// cf-ch20 -> azure switzerlandnorth).
func euAccessOnly(r Region) Region {
	r.AccessRestrictions = append(r.AccessRestrictions, "eu-access-only")
	return r
}

func sizes(prefix string, cpuMem map[string][2]string) []MachineType {
	out := make([]MachineType, 0, len(cpuMem))
	for suffix, cm := range cpuMem {
		out = append(out, MachineType{Name: prefix + suffix, CPU: cm[0], Memory: cm[1]})
	}
	return out
}

var standardSizes = map[string][2]string{
	"large": {"2", "8Gi"}, "xlarge": {"4", "16Gi"}, "2xlarge": {"8", "32Gi"}, "4xlarge": {"16", "64Gi"},
	"8xlarge": {"32", "128Gi"}, "12xlarge": {"48", "192Gi"}, "16xlarge": {"64", "256Gi"},
}

// memorySizes are the memory-optimised (8 GiB per CPU) sizes KEB offers for additional worker pools.
var memorySizes = map[string][2]string{
	"large": {"2", "16Gi"}, "xlarge": {"4", "32Gi"}, "2xlarge": {"8", "64Gi"}, "4xlarge": {"16", "128Gi"},
}

// Default returns the catalogue that mirrors what KEB's plans use: what earlier KEB versions sent (runtimes
// created then still carry it) plus every machine type, region, zone and volume type KEB sends at KEBSource
// (keb.go). Callers may modify the result (it is a fresh copy) before seeding, e.g. to add a region or a
// CredentialsBinding.
func Default() Catalogue {
	aws := append(sizes("m6i.", standardSizes), sizes("m5.", standardSizes)...)
	aws = append(aws, sizes("r6i.", memorySizes)...)
	aws = append(aws, MachineType{Name: "g6.xlarge", CPU: "4", Memory: "16Gi", GPU: "1"},
		MachineType{Name: "g4dn.xlarge", CPU: "4", Memory: "16Gi", GPU: "1"})
	azure := []MachineType{
		{Name: "Standard_D2s_v5", CPU: "2", Memory: "8Gi"}, {Name: "Standard_D4s_v5", CPU: "4", Memory: "16Gi"},
		{Name: "Standard_D8s_v5", CPU: "8", Memory: "32Gi"}, {Name: "Standard_D16s_v5", CPU: "16", Memory: "64Gi"},
		{Name: "Standard_D32s_v5", CPU: "32", Memory: "128Gi"}, {Name: "Standard_D48s_v5", CPU: "48", Memory: "192Gi"},
		{Name: "Standard_D64s_v5", CPU: "64", Memory: "256Gi"},
	}
	gcp := []MachineType{
		{Name: "n2-standard-2", CPU: "2", Memory: "8Gi"}, {Name: "n2-standard-4", CPU: "4", Memory: "16Gi"},
		{Name: "n2-standard-8", CPU: "8", Memory: "32Gi"}, {Name: "n2-standard-16", CPU: "16", Memory: "64Gi"},
		{Name: "n2-standard-32", CPU: "32", Memory: "128Gi"}, {Name: "n2-standard-48", CPU: "48", Memory: "192Gi"},
		{Name: "n2-standard-64", CPU: "64", Memory: "256Gi"},
	}
	openstack := []MachineType{
		{Name: "g_c2_m8", CPU: "2", Memory: "8Gi"}, {Name: "g_c4_m16", CPU: "4", Memory: "16Gi"},
		{Name: "g_c6_m24", CPU: "6", Memory: "24Gi"}, {Name: "g_c8_m32", CPU: "8", Memory: "32Gi"},
		{Name: "g_c12_m48", CPU: "12", Memory: "48Gi"}, {Name: "g_c16_m64", CPU: "16", Memory: "64Gi"},
	}
	alicloud := []MachineType{
		{Name: "ecs.g8i.large", CPU: "2", Memory: "8Gi"}, {Name: "ecs.g8i.xlarge", CPU: "4", Memory: "16Gi"},
		{Name: "ecs.g8i.2xlarge", CPU: "8", Memory: "32Gi"}, {Name: "ecs.g8i.4xlarge", CPU: "16", Memory: "64Gi"},
	}
	alicloud = append(alicloud, sizes("ecs.g7.", map[string][2]string{
		"large": {"2", "8Gi"}, "xlarge": {"4", "16Gi"}, "2xlarge": {"8", "32Gi"}, "4xlarge": {"16", "64Gi"},
	})...)
	gdch := []MachineType{
		{Name: "n2-standard-2-gdc", CPU: "2", Memory: "8Gi"}, {Name: "n2-standard-4-gdc", CPU: "4", Memory: "16Gi"},
		{Name: "n2-standard-8-gdc", CPU: "8", Memory: "32Gi"},
	}
	return withKEB(Catalogue{
		Project:            "kyma",
		KubernetesVersions: []string{"1.32.9", "1.33.4", "1.33.5", "1.34.2", "1.35.1"},
		MachineImages: []MachineImage{
			{Name: "gardenlinux", Versions: []string{"1592.9.0", "1877.3.0", "1877.5.0"}},
		},
		NetworkingTypes:       []string{"calico", "cilium"},
		DNSProviderTypes:      []string{"aws-route53", "azure-dns", "google-clouddns", "openstack-designate", "alicloud-dns"},
		ContainerRuntimeTypes: []string{"gvisor"},
		// Shoots in KSA regions (gcp me-central2) tolerate the assured-workload seeds.
		ProjectTolerations: []string{"ksa-assured-workload"},
		// The openstack (SAP converged cloud) shoots' load balancers face the internet through this class.
		ExposureClasses: []string{"converged-cloud-internet"},
		// Named by the operator configuration (shoot.dns.secretName, shoot.auditLog.secretName and
		// shoot.auditLog.policyConfigMapName): a KIM configured for the sandbox uses these names.
		Secrets:               []string{"aws-route53-secret", "auditlog-credentials"},
		AuditPolicyConfigMaps: []string{"audit-policy"},
		ExtensionTypes: []string{
			"shoot-networking-filter", "shoot-cert-service", "shoot-dns-service", "shoot-oidc-service",
			"shoot-auditlog-service", "registry-cache", "acl", "shoot-networking-problemdetector", "shoot-lakom-service",
			"shoot-nvidia-openshell",
		},
		// CredentialsBindings: the first of each provider is what gardenbox.NewShoot uses; the "*-kyma-*" ones are
		// those the golden Runtimes of adapters/gardener/testdata name (their integration test seeds this catalogue).
		Providers: []Provider{
			{
				Type: "aws", CloudProfile: "aws", MachineTypes: aws, VolumeTypes: []string{"gp2", "gp3", "io1"},
				Regions: []Region{
					euAccessOnly(zones("eu-central-1", "a", "b", "c")), zones("eu-west-1", "a", "b", "c"),
					zones("us-east-1", "a", "b", "c"), zones("ap-southeast-1", "a", "b", "c"),
					zones("eu-west-2", "a", "b", "c"), zones("us-west-2", "a", "b", "c"),
				},
				CredentialsBindings: []string{"aws-trial-shared-01", "aws-sandbox", "aws-kyma-1", "aws-kyma-eu", "aws-kyma-free"},
			},
			{
				Type: "azure", CloudProfile: "az", MachineTypes: azure, VolumeTypes: []string{"StandardSSD_LRS", "Premium_LRS"},
				Regions: []Region{
					plain("eastus", "1", "2", "3"), plain("westeurope", "1", "2", "3"),
					euAccessOnly(plain("switzerlandnorth", "1", "2", "3")), plain("northeurope", "1", "2", "3"),
				},
				CredentialsBindings: []string{"azure-trial-shared-01", "azure-sandbox", "azure-kyma-1"},
			},
			{
				Type: "gcp", CloudProfile: "gcp", MachineTypes: gcp, VolumeTypes: []string{"pd-balanced", "pd-ssd", "pd-standard"},
				Regions: []Region{
					zones("europe-west3", "-a", "-b", "-c"), zones("us-central1", "-a", "-b", "-c"),
					zones("asia-south1", "-a", "-b", "-c"), zones("me-central2", "-a", "-b", "-c"),
				},
				CredentialsBindings: []string{"gcp-trial-shared-01", "gcp-sandbox", "gcp-kyma-1", "gcp-kyma-ksa"},
			},
			{
				Type: "openstack", CloudProfile: "converged-cloud-kyma", MachineTypes: openstack, VolumeTypes: []string{"standard_hdd"},
				Regions:             []Region{zones("eu-de-1", "a", "b", "d"), zones("eu-de-2", "a", "b"), zones("ap-jp-1", "a")},
				CredentialsBindings: []string{"openstack-sandbox", "openstack-kyma-1"},
			},
			{
				Type: "alicloud", CloudProfile: "alicloud", MachineTypes: alicloud, VolumeTypes: []string{"cloud_essd"},
				Regions:             []Region{zones("eu-central-1", "a", "b", "c"), zones("cn-beijing", "-h", "-i", "-j")},
				CredentialsBindings: []string{"alicloud-sandbox", "alicloud-kyma-1"},
			},
			{
				Type: "gdch", CloudProfile: "gdch", MachineTypes: gdch, VolumeTypes: []string{"standard-rwo"},
				Regions:             []Region{zones("zone1", "-a", "-b", "-c")},
				CredentialsBindings: []string{"gdch-sandbox", "gdch-kyma-1"},
			},
		},
	})
}
