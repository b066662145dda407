package shoot

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/kyma-project/kim/core/domain/wire"
)

// Annotation and label keys the operator sets on shoots.
const (
	AnnotationRuntimeID         = "infrastructuremanager.kyma-project.io/runtime-id"
	AnnotationRuntimeGeneration = "infrastructuremanager.kyma-project.io/runtime-generation"
	AnnotationLicenceType       = "infrastructuremanager.kyma-project.io/licence-type"
	LabelAccount                = "account"
	LabelSubaccount             = "subaccount"
)

// Values derived from Gardener and landscape rules.
const (
	EUAccessRestriction    = "eu-access-only"
	EUAccessAddonsOption   = "support.gardener.cloud/eu-access-for-cluster-addons"
	EUAccessNodesOption    = "support.gardener.cloud/eu-access-for-cluster-nodes"
	KSAToleration          = "ksa-assured-workload"
	OpenStackExposureClass = "converged-cloud-internet"
	SeedRegionLabel        = "seed.gardener.cloud/region"
	FailureToleranceZone   = "zone"
	FailureToleranceNode   = "node"
)

var (
	dnsLabel      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	labelValue    = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	shootPurposes = map[string]bool{"evaluation": true, "testing": true, "development": true, "production": true}
)

// MaxProjectAndShootName is Gardener's limit on the length of the project name plus the shoot name (both end up in
// the technical ID of the shoot's namespaces on the seed).
const MaxProjectAndShootName = 21

func stepIdentity(in input, s *Spec) error {
	rt := in.rt
	if rt.Name == "" {
		return invalid(ReasonMissingField, "spec.shoot.name", "the shoot name must be set")
	}
	if len(rt.Name) > 63 || !dnsLabel.MatchString(rt.Name) {
		return invalid(ReasonInvalidName, "spec.shoot.name", "%q is not a DNS label (lowercase letters, digits, '-')", rt.Name)
	}
	if in.cfg.Project == "" {
		return invalid(ReasonInvalidConfig, "gardener.project", "the Gardener project must be configured")
	}
	if n := len(in.cfg.Project) + len(rt.Name); n > MaxProjectAndShootName {
		return invalid(ReasonInvalidName, "spec.shoot.name", "%q is too long for Gardener project %q: project and shoot name may have %d characters together, they have %d",
			rt.Name, in.cfg.Project, MaxProjectAndShootName, n)
	}
	if rt.Region == "" {
		return invalid(ReasonMissingField, "spec.shoot.region", "the region must be set")
	}
	if rt.Purpose != "" && !shootPurposes[rt.Purpose] {
		return invalid(ReasonInvalidPurpose, "spec.shoot.purpose", "%q is not one of evaluation, testing, development, production", rt.Purpose)
	}
	labels := map[string]string{}
	for key, v := range map[string]string{LabelAccount: rt.GlobalAccountID, LabelSubaccount: rt.SubaccountID} {
		if v == "" {
			continue
		}
		if len(v) > 63 || !labelValue.MatchString(v) {
			return invalid(ReasonInvalidLabel, "metadata.labels", "%s %q is not a valid label value", key, v)
		}
		labels[key] = v
	}
	annotations := map[string]string{AnnotationRuntimeGeneration: strconv.FormatInt(rt.Generation, 10)}
	if rt.ID != "" {
		annotations[AnnotationRuntimeID] = rt.ID
	}
	if rt.LicenceType != "" {
		annotations[AnnotationLicenceType] = rt.LicenceType
	}
	s.Name = rt.Name
	s.Namespace = wire.GardenNamespace(in.cfg.Project)
	s.Labels = labels
	s.Annotations = annotations
	s.Region = rt.Region
	s.Purpose = rt.Purpose
	return nil
}

func stepProvider(in input, s *Spec) error {
	switch in.rt.Provider {
	case AWS, Azure, GCP, OpenStack, Alicloud, GDCH:
		s.Provider.Type = in.rt.Provider
		return nil
	case "":
		return invalid(ReasonMissingField, "spec.shoot.provider.type", "the provider type must be set")
	default:
		return invalid(ReasonUnsupportedProvider, "spec.shoot.provider.type",
			"%q is not one of aws, azure, gcp, openstack, alicloud, gdch", in.rt.Provider)
	}
}

func stepCloudProfile(in input, s *Spec) error {
	name := CloudProfileName(in.rt, in.cfg)
	if name == "" {
		return invalid(ReasonInvalidConfig, "shoot.cloudProfiles."+string(in.rt.Provider), "no cloud profile configured for this provider")
	}
	s.CloudProfile = name
	return nil
}

func stepCredentialsBinding(in input, s *Spec) error {
	if in.rt.CredentialsBinding == "" {
		return invalid(ReasonMissingField, "spec.shoot.secretBindingName", "the credentials binding name must be set")
	}
	s.CredentialsBinding = in.rt.CredentialsBinding
	return nil
}

func stepKubernetesVersion(in input, s *Spec) error {
	v := in.rt.KubernetesVersion
	field := "spec.shoot.kubernetes.version"
	if v == "" {
		v, field = in.cfg.DefaultKubernetesVersion, "shoot.defaultKubernetesVersion"
	}
	if v == "" {
		return invalid(ReasonMissingField, field, "no Kubernetes version given and no default configured")
	}
	if !kubernetesVersionPattern.MatchString(v) {
		return invalid(ReasonInvalidKubernetesVersion, field, "%q is not a version like 1.33 or 1.33.2", v)
	}
	if in.current != nil {
		v = notLower(v, in.current.KubernetesVersion)
	}
	s.KubernetesVersion = v
	return nil
}

func stepMaintenance(in input, s *Spec) error {
	m := in.cfg.Maintenance
	s.Maintenance = Maintenance{
		AutoUpdateKubernetesVersion:   m.AutoUpdateKubernetesVersion,
		AutoUpdateMachineImageVersion: m.AutoUpdateMachineImageVersion,
	}
	if in.rt.Purpose == "production" {
		if w, ok := m.Windows[in.rt.Region]; ok {
			s.Maintenance.Window = &TimeWindow{Begin: w.Begin, End: w.End}
		}
	}
	return nil
}

// stepEUAccess restricts clusters of EU-access platform regions (shoot.euAccess.platformRegions) to the EU.
func stepEUAccess(in input, s *Spec) error {
	regions := in.cfg.EUAccessPlatformRegions
	if regions == nil {
		regions = DefaultEUAccessPlatformRegions
	}
	if !slices.Contains(regions, in.rt.PlatformRegion) || in.rt.PlatformRegion == "" || in.cfg.Features.DisableEUAccess {
		return nil
	}
	s.AccessRestrictions = []AccessRestriction{{
		Name:    EUAccessRestriction,
		Options: map[string]string{EUAccessAddonsOption: "true", EUAccessNodesOption: "true"},
	}}
	return nil
}

func stepSeedSelector(in input, s *Spec) error {
	if in.rt.EnforceSeedLocation {
		s.SeedRegion = in.rt.Region
	}
	return nil
}

// stepTolerations lets clusters of a region onto the seeds reserved for it (shoot.tolerations).
func stepTolerations(in input, s *Spec) error {
	byRegion := in.cfg.RegionTolerations
	if byRegion == nil {
		byRegion = DefaultRegionTolerations
	}
	s.Tolerations = append(s.Tolerations, byRegion[in.rt.Region]...)
	return nil
}

// Gardener's cleanup grace periods: how long it waits for finalizers of extended API objects, Kubernetes
// resources and webhooks before it removes them during deletion.
const (
	AnnotationCleanupExtendedAPIs        = "shoot.gardener.cloud/cleanup-extended-apis-finalize-grace-period-seconds"
	AnnotationCleanupKubernetesResources = "shoot.gardener.cloud/cleanup-kubernetes-resources-finalize-grace-period-seconds"
	AnnotationCleanupWebhooks            = "shoot.gardener.cloud/cleanup-webhooks-finalize-grace-period-seconds"
)

// stepCleanupGracePeriods records the configured cleanup grace periods (shoot.cleanupGracePeriods) as annotations.
func stepCleanupGracePeriods(in input, s *Spec) error {
	g := in.cfg.CleanupGracePeriods
	for key, v := range map[string]*int64{
		AnnotationCleanupExtendedAPIs: g.ExtendedAPIs, AnnotationCleanupKubernetesResources: g.KubernetesResources,
		AnnotationCleanupWebhooks: g.Webhooks,
	} {
		if v == nil {
			continue
		}
		if *v < 0 {
			return invalid(ReasonInvalidConfig, "shoot.cleanupGracePeriods", "%s must not be negative", key)
		}
		s.Annotations[key] = strconv.FormatInt(*v, 10)
	}
	return nil
}

func stepExposureClass(in input, s *Spec) error {
	if in.rt.Provider == OpenStack {
		s.ExposureClass = OpenStackExposureClass
	}
	return nil
}

func stepHighAvailability(in input, s *Spec) error {
	switch in.rt.HAFailureTolerance {
	case "", FailureToleranceZone, FailureToleranceNode:
		s.HAFailureTolerance = in.rt.HAFailureTolerance
		return nil
	default:
		return invalid(ReasonInvalidHighAvailability, "spec.shoot.controlPlane.highAvailability.failureTolerance.type",
			"%q is not one of zone, node", in.rt.HAFailureTolerance)
	}
}
