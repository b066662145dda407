package translate

import (
	"fmt"
	"maps"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// ToShoot maps a domain spec to the Shoot to create.
func ToShoot(spec shoot.Spec) (*gardencorev1beta1.Shoot, error) {
	infra, err := infrastructureConfig(spec.Provider)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	cp, err := controlPlaneConfig(spec.Provider)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	workers, err := workers(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	exts, err := extensions(spec.Extensions)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	network, err := networkingConfig(spec.Networking)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", spec.Name, err)
	}
	s := &gardencorev1beta1.Shoot{
		TypeMeta: metav1.TypeMeta{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{
			Name: spec.Name, Namespace: spec.Namespace,
			Labels: maps.Clone(spec.Labels), Annotations: maps.Clone(spec.Annotations),
		},
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile:           &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: spec.CloudProfile},
			CredentialsBindingName: ptr.To(spec.CredentialsBinding),
			Region:                 spec.Region,
			Kubernetes:             gardencorev1beta1.Kubernetes{Version: spec.KubernetesVersion},
			Networking: &gardencorev1beta1.Networking{
				Type: optional(spec.Networking.Type), Pods: optional(spec.Networking.Pods),
				Nodes: optional(spec.Networking.Nodes), Services: optional(spec.Networking.Services),
				ProviderConfig: network,
			},
			Provider: gardencorev1beta1.Provider{
				Type:                 string(spec.Provider.Type),
				InfrastructureConfig: infra,
				ControlPlaneConfig:   cp,
				Workers:              workers,
				WorkersSettings:      &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}},
			},
			Extensions:  exts,
			Maintenance: maintenance(spec.Maintenance, nil),
		},
	}
	for _, f := range spec.Networking.IPFamilies {
		s.Spec.Networking.IPFamilies = append(s.Spec.Networking.IPFamilies, gardencorev1beta1.IPFamily(f))
	}
	if spec.Purpose != "" {
		s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurpose(spec.Purpose))
	}
	setKubeAPIServer(&s.Spec.Kubernetes, spec)
	s.Spec.Resources = mergeResources(nil, spec.Resources)
	s.Spec.DNS = dns(spec)
	s.Spec.AccessRestrictions = mergeAccessRestrictions(nil, spec.AccessRestrictions)
	s.Spec.SeedSelector = seedSelector(nil, spec.SeedRegion)
	s.Spec.Tolerations = mergeTolerations(nil, spec.Tolerations)
	if spec.ExposureClass != "" {
		s.Spec.ExposureClassName = ptr.To(spec.ExposureClass)
	}
	if spec.HAFailureTolerance != "" {
		s.Spec.ControlPlane = &gardencorev1beta1.ControlPlane{HighAvailability: &gardencorev1beta1.HighAvailability{
			FailureTolerance: gardencorev1beta1.FailureTolerance{Type: gardencorev1beta1.FailureToleranceType(spec.HAFailureTolerance)},
		}}
	}
	return s, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return ptr.To(s)
}

// setKubeAPIServer sets the API server and kubelet fields we own, keeping all others.
func setKubeAPIServer(k *gardencorev1beta1.Kubernetes, spec shoot.Spec) {
	if k.KubeAPIServer == nil {
		k.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{}
	}
	api := k.KubeAPIServer
	api.FeatureGates = maps.Clone(spec.KubeAPIServer.FeatureGates)
	api.RuntimeConfig = maps.Clone(spec.KubeAPIServer.RuntimeConfig)
	if spec.KubeAPIServer.MaxTokenExpiration > 0 {
		if api.ServiceAccountConfig == nil {
			api.ServiceAccountConfig = &gardencorev1beta1.ServiceAccountConfig{}
		}
		api.ServiceAccountConfig.MaxTokenExpiration = &metav1.Duration{Duration: spec.KubeAPIServer.MaxTokenExpiration}
		api.ServiceAccountConfig.ExtendTokenExpiration = ptr.To(false)
	}
	if len(spec.KubeletFeatureGates) > 0 {
		if k.Kubelet == nil {
			k.Kubelet = &gardencorev1beta1.KubeletConfig{}
		}
		k.Kubelet.FeatureGates = maps.Clone(spec.KubeletFeatureGates)
	} else if k.Kubelet != nil {
		k.Kubelet.FeatureGates = nil
	}
	k.KubeAPIServer.StructuredAuthentication = nil
	if spec.Authentication != nil {
		k.KubeAPIServer.StructuredAuthentication = &gardencorev1beta1.StructuredAuthentication{ConfigMapName: spec.Authentication.ConfigMapName}
	}
	if spec.AuditPolicyConfigMap != "" {
		k.KubeAPIServer.AuditConfig = &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{
			ConfigMapRef: &corev1.ObjectReference{Name: spec.AuditPolicyConfigMap},
		}}
	}
}

// workers maps the pools. A pool of current with the same name is the starting point, so fields others set
// survive updates; every field KEB sent (w.Raw: architecture, provider config, data volumes, priority, sysctls,
// update strategy, autoscaler options, ...) is laid over it, and the fields the operator owns over that.
func workers(spec shoot.Spec, current []gardencorev1beta1.Worker) ([]gardencorev1beta1.Worker, error) {
	out := make([]gardencorev1beta1.Worker, 0, len(spec.Workers))
	for _, w := range spec.Workers {
		var gw gardencorev1beta1.Worker
		if i := slices.IndexFunc(current, func(c gardencorev1beta1.Worker) bool { return c.Name == w.Name }); i >= 0 {
			current[i].DeepCopyInto(&gw)
		}
		if err := overlayWorker(&gw, w.Raw); err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		gw.Name = w.Name
		gw.Machine.Type = w.MachineType
		if gw.Machine.Image == nil {
			gw.Machine.Image = &gardencorev1beta1.ShootMachineImage{}
		}
		gw.Machine.Image.Name = w.ImageName
		gw.Machine.Image.Version = optional(w.ImageVersion)
		gw.Minimum, gw.Maximum = w.Minimum, w.Maximum
		gw.MaxSurge, gw.MaxUnavailable = intOrString(w.MaxSurge), intOrString(w.MaxUnavailable)
		if w.VolumeSize != "" {
			if gw.Volume == nil {
				gw.Volume = &gardencorev1beta1.Volume{}
			}
			gw.Volume.VolumeSize = w.VolumeSize
			gw.Volume.Type = optional(w.VolumeType)
		}
		gw.Zones = slices.Clone(w.Zones)
		gw.Labels, gw.Annotations = maps.Clone(w.Labels), maps.Clone(w.Annotations)
		gw.Taints = nil
		for _, t := range w.Taints {
			gw.Taints = append(gw.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		if err := containerRuntimes(&gw, w.Worker); err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		machineControllerManager(&gw, w.Worker)
		if w.MaxPods != nil {
			if gw.Kubernetes == nil {
				gw.Kubernetes = &gardencorev1beta1.WorkerKubernetes{}
			}
			if gw.Kubernetes.Kubelet == nil {
				gw.Kubernetes.Kubelet = &gardencorev1beta1.KubeletConfig{}
			}
			gw.Kubernetes.Kubelet.MaxPods = ptr.To(*w.MaxPods)
		}
		cfg, err := workerConfig(spec.Provider.Type, w)
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		if gw.ProviderConfig, err = mergeRaw(gw.ProviderConfig, cfg); err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		out = append(out, gw)
	}
	// Pools the shoot has keep its order (the previous manager kept it too: a new order is a new generation for
	// nothing); new pools follow in the Runtime's order.
	rank := func(w gardencorev1beta1.Worker) int {
		if i := slices.IndexFunc(current, func(c gardencorev1beta1.Worker) bool { return c.Name == w.Name }); i >= 0 {
			return i
		}
		return len(current)
	}
	slices.SortStableFunc(out, func(a, b gardencorev1beta1.Worker) int { return rank(a) - rank(b) })
	return out, nil
}

func intOrString(v string) *intstr.IntOrString {
	if v == "" {
		return nil
	}
	x := intstr.Parse(v)
	return &x
}

func maintenance(m shoot.Maintenance, current *gardencorev1beta1.Maintenance) *gardencorev1beta1.Maintenance {
	out := &gardencorev1beta1.Maintenance{}
	if current != nil {
		out = current.DeepCopy()
	}
	if out.AutoUpdate == nil {
		out.AutoUpdate = &gardencorev1beta1.MaintenanceAutoUpdate{}
	}
	out.AutoUpdate.KubernetesVersion = m.AutoUpdateKubernetesVersion
	out.AutoUpdate.MachineImageVersion = ptr.To(m.AutoUpdateMachineImageVersion)
	if m.Window != nil {
		out.TimeWindow = &gardencorev1beta1.MaintenanceTimeWindow{Begin: m.Window.Begin, End: m.Window.End}
	}
	return out
}

func dns(spec shoot.Spec) *gardencorev1beta1.DNS {
	if spec.DNS == nil {
		return nil
	}
	provider := gardencorev1beta1.DNSProvider{
		Primary: ptr.To(true), //nolint:staticcheck // Gardener still requires exactly one primary provider for the shoot's own domain
		Type:    optional(spec.DNS.ProviderType),
		// The provider manages only the shoot's own domain (the previous manager's rendering; shoot-dns-service
		// would derive the same for its provider).
		Domains: &gardencorev1beta1.DNSIncludeExclude{Include: []string{spec.DNS.Domain}}, //nolint:staticcheck // adopted shoots carry it (the previous manager set it); leaving it out would change them
		CredentialsRef: &autoscalingv1.CrossVersionObjectReference{
			APIVersion: "v1", Kind: "Secret", Name: spec.DNS.SecretName,
		},
	}
	// Below Kubernetes 1.35 Gardener still requires secretName to mirror credentialsRef; from 1.35 on it is forbidden.
	if compareMinor(spec.KubernetesVersion, 1, 35) < 0 {
		provider.SecretName = ptr.To(spec.DNS.SecretName) //nolint:staticcheck // required below 1.35, see above
	}
	//nolint:staticcheck // one primary provider is still the supported way to give a shoot its own DNS domain
	return &gardencorev1beta1.DNS{Domain: ptr.To(spec.DNS.Domain), Providers: []gardencorev1beta1.DNSProvider{provider}}
}

func seedSelector(current *gardencorev1beta1.SeedSelector, region string) *gardencorev1beta1.SeedSelector {
	if region == "" {
		return current
	}
	out := &gardencorev1beta1.SeedSelector{}
	if current != nil {
		out = current.DeepCopy()
	}
	if out.MatchLabels == nil {
		out.MatchLabels = map[string]string{}
	}
	out.MatchLabels[shoot.SeedRegionLabel] = region
	return out
}
