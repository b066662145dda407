package translate

import (
	"encoding/json"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// RegistryCaches reads the caches of a shoot's enabled registry-cache extension, each cache's credentials Secret
// resolved through spec.resources. A config the operator cannot read counts as no caches: nothing of it was
// applied by the operator.
func RegistryCaches(s *gardencorev1beta1.Shoot) []shoot.RegistryCache {
	targets := map[string]string{}
	for _, r := range s.Spec.Resources {
		if r.ResourceRef.Kind == "Secret" {
			targets[r.Name] = r.ResourceRef.Name
		}
	}
	var out []shoot.RegistryCache
	for _, e := range s.Spec.Extensions {
		if e.Type != shoot.ExtensionRegistryCache || ptr.Deref(e.Disabled, false) || e.ProviderConfig == nil {
			continue
		}
		var cfg registryConfig
		if err := json.Unmarshal(e.ProviderConfig.Raw, &cfg); err != nil {
			continue
		}
		for _, c := range cfg.Caches {
			out = append(out, domainCache(c, targets))
		}
	}
	return out
}

// domainCache is the inverse of registryCacheConfig's per-cache mapping.
func domainCache(c registryCache, targets map[string]string) shoot.RegistryCache {
	out := shoot.RegistryCache{Upstream: c.Upstream, RemoteURL: c.RemoteURL, SecretReferenceName: c.SecretReferenceName}
	if c.SecretReferenceName != "" {
		out.CredentialsSecret = targets[c.SecretReferenceName]
	}
	if c.Volume != nil {
		out.VolumeSize, out.VolumeStorageClass = c.Volume.Size, c.Volume.StorageClassName
	}
	if c.GarbageCollection != nil {
		out.GarbageCollectionTTL = c.GarbageCollection.TTL
	}
	if c.HighAvailability != nil {
		out.HighAvailability = c.HighAvailability.Enabled
	}
	if c.Proxy != nil {
		out.HTTPProxy, out.HTTPSProxy = c.Proxy.HTTPProxy, c.Proxy.HTTPSProxy
	}
	if c.HTTP != nil {
		out.TLS = ptr.To(c.HTTP.TLS)
	}
	return out
}
