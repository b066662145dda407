package translate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// CurrentFromShoot is the domain view of an existing shoot that shoot.GenerateUpdate needs.
func CurrentFromShoot(s *gardencorev1beta1.Shoot) (shoot.Current, error) {
	cur := shoot.Current{KubernetesVersion: s.Spec.Kubernetes.Version,
		SecretBindingName: ptr.Deref(s.Spec.SecretBindingName, ""), //nolint:staticcheck // read to migrate shoots away from it
	}
	if n := s.Spec.Networking; n != nil {
		cur.DualStack = slices.Contains(n.IPFamilies, gardencorev1beta1.IPFamilyIPv4) && slices.Contains(n.IPFamilies, gardencorev1beta1.IPFamilyIPv6)
	}
	if api := s.Spec.Kubernetes.KubeAPIServer; api != nil && api.StructuredAuthentication != nil {
		cur.AuthenticationConfigMap = api.StructuredAuthentication.ConfigMapName
	}
	for _, e := range s.Spec.Extensions {
		if e.Disabled == nil || !*e.Disabled {
			cur.ExtensionTypes = append(cur.ExtensionTypes, e.Type)
		}
	}
	cur.AuditLog = currentAuditLog(s)
	cur.RegistryCacheCredentials = currentRegistryCredentials(s)
	cur.DNSExtensionWithoutProviders = dnsExtensionWithoutProviders(s)
	for _, w := range s.Spec.Provider.Workers {
		p := poolFromShoot(w)
		cur.Workers = append(cur.Workers, shoot.CurrentWorker{Name: p.Name, Zones: append([]string(nil), w.Zones...),
			ImageName: p.ImageName, ImageVersion: p.ImageVersion,
			MachineDrainTimeout: p.MachineDrainTimeout, MaxEvictRetries: p.MaxEvictRetries})
	}
	infra := s.Spec.Provider.InfrastructureConfig
	cur.HasInfrastructureConfig = infra != nil && len(infra.Raw) > 0
	if cur.HasInfrastructureConfig {
		cur.InfrastructureConfig = slices.Clone(infra.Raw)
	}
	zones, err := infrastructureZones(s.Spec.Provider.Type, infra)
	if err != nil {
		return shoot.Current{}, fmt.Errorf("shoot %s/%s: %w", s.Namespace, s.Name, err)
	}
	cur.InfrastructureZones = zones
	return cur, nil
}

// ApplySpec returns current with the fields the operator owns set from spec; everything else
// (fields Gardener defaulted, fields operators set, status) is kept. Worker pools missing from spec
// are removed; immutable fields already set (networking, DNS domain, exposure class, HA type) keep
// their current values.
func ApplySpec(current *gardencorev1beta1.Shoot, spec shoot.Spec) (*gardencorev1beta1.Shoot, error) {
	s := current.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	maps.Copy(s.Labels, spec.Labels)
	maps.Copy(s.Annotations, spec.Annotations)

	s.Spec.CloudProfile = &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: spec.CloudProfile}
	s.Spec.CloudProfileName = nil //nolint:staticcheck // cleared so that only the non-deprecated cloudProfile reference is sent
	s.Spec.CredentialsBindingName = ptr.To(spec.CredentialsBinding)
	if spec.Purpose != "" {
		s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurpose(spec.Purpose))
	}
	s.Spec.Kubernetes.Version = spec.KubernetesVersion
	setKubeAPIServer(&s.Spec.Kubernetes, spec)

	if s.Spec.Networking == nil {
		s.Spec.Networking = &gardencorev1beta1.Networking{}
	}
	n := s.Spec.Networking
	n.Type = keepOr(n.Type, spec.Networking.Type)
	n.Pods = keepOr(n.Pods, spec.Networking.Pods)
	n.Nodes = keepOr(n.Nodes, spec.Networking.Nodes)
	n.Services = keepOr(n.Services, spec.Networking.Services)
	if n.ProviderConfig == nil { // the network plugin's mode (overlay, VXLAN) is not switched on a running cluster
		network, err := networkingConfig(spec.Networking)
		if err != nil {
			return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
		}
		n.ProviderConfig = network
	}

	if !spec.Provider.KeepInfrastructure || s.Spec.Provider.InfrastructureConfig == nil {
		infra, err := infrastructureConfig(spec.Provider)
		if err != nil {
			return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
		}
		if s.Spec.Provider.InfrastructureConfig, err = mergeRaw(s.Spec.Provider.InfrastructureConfig, infra); err != nil {
			return nil, fmt.Errorf("shoot %s infrastructure: %w", spec.Name, err)
		}
	}
	cp, err := controlPlaneConfig(spec.Provider)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	if s.Spec.Provider.ControlPlaneConfig, err = mergeRaw(s.Spec.Provider.ControlPlaneConfig, cp); err != nil {
		return nil, fmt.Errorf("shoot %s control plane: %w", spec.Name, err)
	}
	if s.Spec.Provider.Workers, err = workers(spec, s.Spec.Provider.Workers); err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	if s.Spec.Provider.WorkersSettings == nil {
		s.Spec.Provider.WorkersSettings = &gardencorev1beta1.WorkersSettings{}
	}
	s.Spec.Provider.WorkersSettings.SSHAccess = &gardencorev1beta1.SSHAccess{Enabled: false}

	exts, err := extensions(spec.Extensions)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	s.Spec.Extensions = mergeExtensions(s.Spec.Extensions, exts, keptExtensionTypes(spec.Extensions))
	s.Spec.Resources = mergeResources(s.Spec.Resources, spec.Resources)
	if s.Spec.DNS == nil || s.Spec.DNS.Domain == nil {
		s.Spec.DNS = dns(spec)
	}
	s.Spec.Maintenance = maintenance(spec.Maintenance, s.Spec.Maintenance)
	s.Spec.AccessRestrictions = mergeAccessRestrictions(s.Spec.AccessRestrictions, spec.AccessRestrictions)
	s.Spec.SeedSelector = seedSelector(s.Spec.SeedSelector, spec.SeedRegion)
	s.Spec.Tolerations = mergeTolerations(s.Spec.Tolerations, spec.Tolerations)
	if s.Spec.ExposureClassName == nil && spec.ExposureClass != "" {
		s.Spec.ExposureClassName = ptr.To(spec.ExposureClass)
	}
	if spec.HAFailureTolerance != "" && (s.Spec.ControlPlane == nil || s.Spec.ControlPlane.HighAvailability == nil) {
		if s.Spec.ControlPlane == nil {
			s.Spec.ControlPlane = &gardencorev1beta1.ControlPlane{}
		}
		s.Spec.ControlPlane.HighAvailability = &gardencorev1beta1.HighAvailability{
			FailureTolerance: gardencorev1beta1.FailureTolerance{Type: gardencorev1beta1.FailureToleranceType(spec.HAFailureTolerance)},
		}
	}
	return s, nil
}

func keepOr(current *string, desired string) *string {
	if current != nil && *current != "" {
		return current
	}
	return optional(desired)
}

// currentAuditLog reads the shoot's enabled auditlog extension and what it references (the credentials resource,
// the audit policy); nil when there is none or it does not name a tenant, a service URL and an existing resource.
func currentAuditLog(s *gardencorev1beta1.Shoot) *shoot.CurrentAuditLog {
	i := slices.IndexFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool {
		return e.Type == shoot.ExtensionAuditLog && !ptr.Deref(e.Disabled, false) && e.ProviderConfig != nil
	})
	if i < 0 {
		return nil
	}
	var cfg auditlogConfig
	if err := json.Unmarshal(s.Spec.Extensions[i].ProviderConfig.Raw, &cfg); err != nil || cfg.TenantID == "" || cfg.ServiceURL == "" {
		return nil
	}
	out := &shoot.CurrentAuditLog{TenantID: cfg.TenantID, ServiceURL: cfg.ServiceURL}
	for _, r := range s.Spec.Resources {
		if r.Name == cfg.SecretReferenceName && r.ResourceRef.Kind == "Secret" {
			out.SecretName, out.ResourceName = r.ResourceRef.Name, r.Name
		}
	}
	if out.SecretName == "" {
		return nil
	}
	if api := s.Spec.Kubernetes.KubeAPIServer; api != nil && api.AuditConfig != nil && api.AuditConfig.AuditPolicy != nil &&
		api.AuditConfig.AuditPolicy.ConfigMapRef != nil {
		out.PolicyConfigMap = api.AuditConfig.AuditPolicy.ConfigMapRef.Name
	}
	return out
}

// currentRegistryCredentials lists, per cache of the shoot's enabled registry-cache extension, the spec.resources
// entry its secretReferenceName names and that entry's Secret; caches without credentials are left out.
func currentRegistryCredentials(s *gardencorev1beta1.Shoot) []shoot.CurrentRegistryCredentials {
	i := slices.IndexFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool {
		return e.Type == shoot.ExtensionRegistryCache && !ptr.Deref(e.Disabled, false) && e.ProviderConfig != nil
	})
	if i < 0 {
		return nil
	}
	var cfg registryConfig
	if err := json.Unmarshal(s.Spec.Extensions[i].ProviderConfig.Raw, &cfg); err != nil {
		return nil
	}
	var out []shoot.CurrentRegistryCredentials
	for _, c := range cfg.Caches {
		if c.SecretReferenceName == "" {
			continue
		}
		for _, r := range s.Spec.Resources {
			if r.Name == c.SecretReferenceName && r.ResourceRef.Kind == "Secret" {
				out = append(out, shoot.CurrentRegistryCredentials{Upstream: c.Upstream, ResourceName: r.Name, SecretName: r.ResourceRef.Name})
			}
		}
	}
	return out
}
