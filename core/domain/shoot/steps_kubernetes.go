package shoot

import (
	"maps"
	"regexp"
	"time"
)

// featureGateName is a Kubernetes feature gate name (UpperCamelCase); Gardener checks that the gate exists in the
// cluster's Kubernetes version.
var featureGateName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// apiGroupVersion is a runtime-config key: "api/all", "<group>/<version>" or "<group>/<version>/<resource>".
var apiGroupVersion = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[a-z0-9]+){1,2}$`)

// stepKubernetesSettings sets what every cluster's API server and kubelets get from the landscape: feature gates,
// API groups (runtime config) and the service account token lifetime, clamped to what Gardener accepts.
func stepKubernetesSettings(in input, s *Spec) error {
	api := in.cfg.KubeAPIServer
	for name := range api.FeatureGates {
		if !featureGateName.MatchString(name) {
			return invalid(ReasonInvalidConfig, "shoot.kubeAPIServer.featureGates", "%q is not a feature gate name", name)
		}
	}
	for name := range in.cfg.Kubelet.FeatureGates {
		if !featureGateName.MatchString(name) {
			return invalid(ReasonInvalidConfig, "shoot.kubelet.featureGates", "%q is not a feature gate name", name)
		}
	}
	for key := range api.RuntimeConfig {
		if !apiGroupVersion.MatchString(key) {
			return invalid(ReasonInvalidConfig, "shoot.kubeAPIServer.runtimeConfig", "%q is not an API group/version like resource.k8s.io/v1beta1", key)
		}
	}
	s.KubeAPIServer = KubeAPIServerSpec{
		FeatureGates:       cloneNonEmpty(api.FeatureGates),
		RuntimeConfig:      cloneNonEmpty(api.RuntimeConfig),
		MaxTokenExpiration: ClampTokenExpiration(api.MaxTokenExpiration),
	}
	s.KubeletFeatureGates = cloneNonEmpty(in.cfg.Kubelet.FeatureGates)
	return nil
}

// ClampTokenExpiration returns d within MinTokenExpiration..MaxTokenExpiration; zero or less is the minimum.
func ClampTokenExpiration(d time.Duration) time.Duration {
	return min(max(d, MinTokenExpiration), MaxTokenExpiration)
}

func cloneNonEmpty[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
