package keb

import (
	"fmt"
	"path/filepath"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Plan is one of KEB's plans with what KEB's create step (Create_Runtime_Resource) puts into a Runtime for it when
// the request names no region and no machine type, at the KEB commit of the sandbox catalogue
// (catalogue.KEBSource). Sources in KEB: plan IDs and names internal/broker/plans.go; regions, machine types,
// zone counts, autoscaler bounds, disk types internal/provider/{aws,azure,gcp,sap-converged-cloud,alicloud,gdch}.go;
// the default machine type of a plan without one in code is the first `regularMachines` entry of its plan
// configuration (cmd/broker/testdata/plans.yaml), resolved by `machinesVersions` (mi.{size} -> m7i.{size}); purpose
// and multi-zone from the chart's defaults (resources/keb/values.yaml: development, multiZoneCluster true).
type Plan struct {
	Name, ID string
	// ProviderType is the Gardener provider type, ProviderLabel KEB's kyma-project.io/provider value.
	ProviderType, ProviderLabel string
	// Region is the plan's default region for platform region cf-eu10, Zones the ones KEB picks there (KEB picks
	// at random among the configured zones; these are the first ones).
	Region string
	Zones  []string
	// MachineType is the default, UpdatedMachineType what KEB sends after a customer's machine-type change ("" when
	// the plan's schema offers no machine type: trial, free).
	MachineType, UpdatedMachineType string
	// VolumeType is empty where KEB sends none (sap-converged-cloud).
	VolumeType       string
	Minimum, Maximum int32
	Purpose          string
	// Binding is the CredentialsBinding (spec.shoot.secretBindingName) of the sandbox catalogue the Runtime names.
	Binding string
}

// ids are the zones prefix+sep+suffix of a region.
func ids(prefix, sep string, suffixes ...string) []string {
	out := make([]string, 0, len(suffixes))
	for _, s := range suffixes {
		out = append(out, prefix+sep+s)
	}
	return out
}

// Plans are KEB's plans (internal/broker/plans.go); trial and free once per provider KEB gives them (the trial's
// provider is KEB's configuration, defaultTrialProvider; free follows the platform's provider).
var Plans = []Plan{
	paid("aws", "361c511f-f939-4621-b228-d0fb79a1fe15", "aws", "AWS", "eu-central-1", ids("eu-central-1", "", "a", "b", "c"), "m7i.large", "m7i.xlarge", "gp3"),
	paid("preview", "5cb3d976-b85c-42ea-a636-79cadda109a9", "aws", "AWS", "eu-central-1", ids("eu-central-1", "", "a", "b", "c"), "m7i.large", "m7i.xlarge", "gp3"),
	paid("build-runtime-aws", "6aae0ff3-89f7-4f12-86de-51466145422e", "aws", "AWS", "eu-central-1", ids("eu-central-1", "", "a", "b", "c"), "m7i.large", "m7i.xlarge", "gp3"),
	paid("azure", "4deee563-e5ec-4731-b9b1-53b42d855f0c", "azure", "Azure", "eastus", []string{"1", "2", "3"}, "Standard_D2s_v5", "Standard_D4s_v5", "StandardSSD_LRS"),
	paid("build-runtime-azure", "499244b4-1bef-48c9-be68-495269899f8e", "azure", "Azure", "eastus", []string{"1", "2", "3"}, "Standard_D2s_v5", "Standard_D4s_v5", "StandardSSD_LRS"),
	{Name: "azure_lite", ID: "8cb22518-aa26-44c5-91a0-e669ec9bf443", ProviderType: "azure", ProviderLabel: "Azure", Region: "eastus",
		Zones: []string{"1"}, MachineType: "Standard_D2s_v5", UpdatedMachineType: "Standard_D4s_v5", VolumeType: "StandardSSD_LRS",
		Minimum: 2, Maximum: 10, Purpose: "development", Binding: "azure-kyma-1"},
	paid("gcp", "ca6e5357-707f-4565-bbbd-b3ab732597c6", "gcp", "GCP", "europe-west3", ids("europe-west3", "-", "a", "b", "c"), "n2-standard-2", "n2-standard-4", "pd-balanced"),
	paid("build-runtime-gcp", "a310cd6b-6452-45a0-935d-d24ab53f9eba", "gcp", "GCP", "europe-west3", ids("europe-west3", "-", "a", "b", "c"), "n2-standard-2", "n2-standard-4", "pd-balanced"),
	paid("sap-converged-cloud", "03b812ac-c991-4528-b5bd-08b303523a63", "openstack", "SapConvergedCloud", "eu-de-1", ids("eu-de-1", "", "a", "b", "d"), "g_c2_m8", "g_c4_m16", ""),
	paid("alicloud", "9f2c3b4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "alicloud", "Alicloud", "eu-central-1", ids("eu-central-1", "", "a", "b", "c"), "ecs.g9i.large", "ecs.g9i.xlarge", "cloud_essd"),
	paid("build-runtime-alicloud", "72efa867-7b54-4d59-8df7-68f4759ff271", "alicloud", "Alicloud", "eu-central-1", ids("eu-central-1", "", "a", "b", "c"), "ecs.g9i.large", "ecs.g9i.xlarge", "cloud_essd"),
	withBounds(paid("gdch", "024e11fb-40df-4753-a992-24d136e2d15c", "gdch", "GDCH", "us-west16", ids("us-west16", "-", "a", "b", "c"), "n3-standard-2-gdc", "n3-standard-4-gdc", "Standard"), 3, 10),
	evaluation("trial", "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", "azure", "Azure", "westeurope", "1", "Standard_D4s_v5", "Standard_LRS", "azure-trial-shared-01"),
	evaluation("trial", "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", "aws", "AWS", "eu-west-1", "eu-west-1a", "m7i.xlarge", "gp3", "aws-trial-shared-01"),
	evaluation("trial", "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", "gcp", "GCP", "europe-west3", "europe-west3-a", "n2-standard-4", "pd-standard", "gcp-trial-shared-01"),
	evaluation("free", "b1a5764e-2ea1-4f95-94c0-2b4538b37b55", "aws", "AWS", "eu-central-1", "eu-central-1a", "m7i.xlarge", "gp3", "aws-kyma-free"),
	evaluation("free", "b1a5764e-2ea1-4f95-94c0-2b4538b37b55", "azure", "Azure", "westeurope", "1", "Standard_D4s_v5", "Standard_LRS", "azure-kyma-1"),
}

// paid is a plan of KEB's commercial input providers: multi-zone (3 zones), autoscaler 3..20.
func paid(name, id, providerType, label, region string, zones []string, machine, updated, volume string) Plan {
	return Plan{Name: name, ID: id, ProviderType: providerType, ProviderLabel: label, Region: region, Zones: zones,
		MachineType: machine, UpdatedMachineType: updated, VolumeType: volume, Minimum: 3, Maximum: 20,
		Purpose: "development", Binding: providerType + "-kyma-1"}
}

func withBounds(p Plan, lo, hi int32) Plan {
	p.Minimum, p.Maximum = lo, hi
	return p
}

// evaluation is a trial or free plan: one zone, one node, purpose evaluation, no machine-type change.
func evaluation(name, id, providerType, label, region, zone, machine, volume, binding string) Plan {
	return Plan{Name: name, ID: id, ProviderType: providerType, ProviderLabel: label, Region: region, Zones: []string{zone},
		MachineType: machine, VolumeType: volume, Minimum: 1, Maximum: 1, Purpose: "evaluation", Binding: binding}
}

// Key names the plan uniquely (trial and free exist once per provider): "trial-aws", "aws".
func (p Plan) Key() string {
	if p.Name == "trial" || p.Name == "free" {
		return p.Name + "-" + p.ProviderType
	}
	return strings.ReplaceAll(p.Name, "_", "-")
}

// PlanRuntime is the Runtime KEB creates for plan p, with the given runtime ID and shoot name: the trial
// fixture's OIDC, networking and security (KEB's defaults) with the plan's labels, region, pool and binding. The
// machine image is empty (KEB's chart sets none: the operator's default applies).
func PlanRuntime(p Plan, runtimeID, shootName string) (*imv1.Runtime, error) {
	base, err := ReadRuntime(filepath.Join(RepoRoot(), "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"))
	if err != nil {
		return nil, err
	}
	rt := WithIdentity(base, runtimeID, shootName)
	rt.Labels[imv1.LabelInstanceID] = "instance-" + runtimeID
	rt.Labels[imv1.LabelBrokerPlanID], rt.Labels[imv1.LabelBrokerPlanName] = p.ID, p.Name
	rt.Labels[imv1.LabelProvider], rt.Labels[imv1.LabelRegion] = p.ProviderLabel, p.Region
	s := &rt.Spec.Shoot
	s.Region, s.Purpose, s.SecretBindingName = p.Region, p.Purpose, p.Binding
	s.Provider.Type = p.ProviderType
	surge, unavailable := intstr.FromInt32(int32(len(p.Zones))), intstr.FromInt32(0)
	w := gardencorev1beta1.Worker{
		Name:    "cpu-worker-0",
		Machine: gardencorev1beta1.Machine{Type: p.MachineType, Image: &gardencorev1beta1.ShootMachineImage{Name: "", Version: ptr.To("")}},
		Minimum: p.Minimum, Maximum: p.Maximum, MaxSurge: &surge, MaxUnavailable: &unavailable,
		Volume: &gardencorev1beta1.Volume{VolumeSize: "80Gi"}, Zones: append([]string(nil), p.Zones...),
	}
	if p.VolumeType != "" {
		w.Volume.Type = ptr.To(p.VolumeType)
	}
	s.Provider.Workers = []gardencorev1beta1.Worker{w}
	s.Provider.AdditionalWorkers = &[]gardencorev1beta1.Worker{}
	// KEB filters egress unless the subaccount has an external licence type.
	rt.Spec.Security.Networking.Filter.Egress.Enabled = true
	return rt, nil
}

// String is the plan's key and region, for test names and messages.
func (p Plan) String() string { return fmt.Sprintf("%s (%s %s)", p.Key(), p.ProviderType, p.Region) }
