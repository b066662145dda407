package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Recovered is the domain Runtime recovered from an existing shoot (RuntimeFromShoot): the reverse of shoot
// generation, for shoots the operator did not create. Generating a shoot from Runtime with the same configuration
// must give the shoot back; AdoptionDifferences checks that.
type Recovered struct {
	// Runtime is what the shoot says about its runtime. Administrators and the platform region are not on a shoot
	// (the caller adds them); the account labels are the shoot's, which the caller may replace by KEB's.
	Runtime shoot.Runtime
	// Predecessor is the system whose annotations name the runtime (PredecessorNone: the shoot names none).
	Predecessor Predecessor
	// SecretBinding is the SecretBinding the shoot still uses (spec.secretBindingName); the Runtime then names the
	// CredentialsBinding of the same name, which the operator switches the shoot to after adoption.
	SecretBinding string
	// Problems are parts of the shoot a Runtime cannot express; the Runtime is then not faithful and must not be used.
	Problems []string
}

// RuntimeFromShoot recovers the Runtime a shoot was generated from. auth is the data of the structured
// authentication ConfigMap the shoot references (nil when it references none); cfg is the configuration the
// operator will generate with: what it adds by itself (its own OIDC issuers, the control plane's ACL entries, the
// AWS instance metadata settings, the pools' machine defaults) is not put into the Runtime.
func RuntimeFromShoot(s *gardencorev1beta1.Shoot, auth map[string]string, cfg shoot.Config) Recovered {
	var out Recovered
	problem := func(format string, args ...any) { out.Problems = append(out.Problems, fmt.Sprintf(format, args...)) }
	rt := &out.Runtime
	rt.ID, out.Predecessor = RuntimeIDOf(s.Annotations)
	rt.GlobalAccountID, rt.SubaccountID = s.Labels[shoot.LabelAccount], s.Labels[shoot.LabelSubaccount]
	rt.Name, rt.Region = s.Name, s.Spec.Region
	rt.Purpose = string(ptr.Deref(s.Spec.Purpose, ""))
	rt.LicenceType = s.Annotations[shoot.AnnotationLicenceType]
	if rt.LicenceType == "" {
		rt.LicenceType = s.Annotations[AnnotationProvisionerLicenceType]
	}
	rt.CredentialsBinding = ptr.Deref(s.Spec.CredentialsBindingName, "")
	//nolint:staticcheck // read to migrate shoots away from it
	if sb := ptr.Deref(s.Spec.SecretBindingName, ""); sb != "" {
		out.SecretBinding = sb
		if rt.CredentialsBinding == "" {
			rt.CredentialsBinding = sb
		}
	}
	if sel := s.Spec.SeedSelector; sel != nil && sel.MatchLabels[shoot.SeedRegionLabel] != "" {
		if sel.MatchLabels[shoot.SeedRegionLabel] != rt.Region {
			problem("spec.seedSelector places the control plane in region %s, not the shoot's region %s", sel.MatchLabels[shoot.SeedRegionLabel], rt.Region)
		}
		rt.EnforceSeedLocation = true
	}
	rt.KubernetesVersion = s.Spec.Kubernetes.Version
	rt.Provider = shoot.Provider(s.Spec.Provider.Type)
	if n := s.Spec.Networking; n != nil {
		rt.Networking = shoot.Networking{Type: ptr.Deref(n.Type, ""), Pods: ptr.Deref(n.Pods, ""), Nodes: ptr.Deref(n.Nodes, ""),
			Services: ptr.Deref(n.Services, ""), DualStack: slices.Contains(n.IPFamilies, gardencorev1beta1.IPFamilyIPv6)}
	}
	if cp := s.Spec.ControlPlane; cp != nil && cp.HighAvailability != nil {
		rt.HAFailureTolerance = string(cp.HighAvailability.FailureTolerance.Type)
	}
	for _, w := range s.Spec.Provider.Workers {
		dw, err := workerFromShoot(w, rt.Provider, cfg)
		if err != nil {
			problem("worker pool %s: %v", w.Name, err)
			continue
		}
		rt.Workers = append(rt.Workers, dw)
	}
	if err := extensionsFromShoot(s, cfg, rt); err != nil {
		problem("%v", err)
	}
	if api := s.Spec.Kubernetes.KubeAPIServer; api != nil && api.StructuredAuthentication != nil && auth == nil {
		problem("the structured authentication ConfigMap %s does not exist", api.StructuredAuthentication.ConfigMapName)
	}
	rt.OIDCGiven, rt.OIDC = true, []shoot.OIDC{}
	if auth != nil {
		issuers, err := issuersFromAuthentication(auth, cfg)
		if err != nil {
			problem("structured authentication: %v", err)
		}
		rt.OIDC = issuers
	}
	return out
}

// extensionsFromShoot reads the extensions a Runtime decides about: the networking filter, NVIDIA OpenShell, the
// registry caches (with the Secrets they reference) and the API server ACL.
func extensionsFromShoot(s *gardencorev1beta1.Shoot, cfg shoot.Config, rt *shoot.Runtime) error {
	for _, e := range s.Spec.Extensions {
		enabled := !ptr.Deref(e.Disabled, false)
		switch e.Type {
		case shoot.ExtensionNetworkingFilter:
			rt.EgressFilter = enabled
			var c networkingFilterConfig
			if err := strictConfig(e.ProviderConfig, &c); err != nil {
				return fmt.Errorf("extension %s: %w", e.Type, err)
			}
			rt.IngressFilter = c.EgressFilter != nil && c.EgressFilter.BlackholingEnabled
		case shoot.ExtensionNvidiaOpenShell:
			rt.NvidiaOpenShell = enabled
		case shoot.ExtensionRegistryCache:
			if !enabled {
				continue
			}
			caches, err := registryCachesFromShoot(e, s.Spec.Resources)
			if err != nil {
				return fmt.Errorf("extension %s: %w", e.Type, err)
			}
			rt.RegistryCaches = caches
		case shoot.ExtensionACL:
			if !enabled {
				continue
			}
			var c aclConfig
			if err := strictConfig(e.ProviderConfig, &c); err != nil {
				return fmt.Errorf("extension %s: %w", e.Type, err)
			}
			for _, cidr := range c.Rule.CIDRs {
				if !slices.Contains(cfg.ACL.ControlPlaneCIDRs, cidr) {
					rt.ACL = append(rt.ACL, cidr)
				}
			}
		}
	}
	return nil
}

func registryCachesFromShoot(e gardencorev1beta1.Extension, resources []gardencorev1beta1.NamedResourceReference) ([]shoot.RegistryCache, error) {
	var c registryConfig
	if err := strictConfig(e.ProviderConfig, &c); err != nil {
		return nil, err
	}
	var out []shoot.RegistryCache
	for _, rc := range c.Caches {
		// The credentials are resolved below, by a stricter rule than the view's.
		cache := domainCache(rc, nil)
		if ref := rc.SecretReferenceName; ref != "" {
			i := slices.IndexFunc(resources, func(r gardencorev1beta1.NamedResourceReference) bool { return r.Name == ref })
			if i < 0 {
				return nil, fmt.Errorf("cache %s references %s, which spec.resources does not list", rc.Upstream, ref)
			}
			// A Runtime names the credentials once: the operator copies them under the reference's own name.
			if target := resources[i].ResourceRef.Name; target != ref {
				return nil, fmt.Errorf("cache %s: resource %s points to Secret %s; a Runtime can only express a Secret of the same name", rc.Upstream, ref, target)
			}
			cache.CredentialsSecret = ref
		}
		out = append(out, cache)
	}
	return out, nil
}

// strictConfig decodes a provider config into v and fails on fields v does not know: a Runtime cannot carry them,
// so generating the shoot again would drop them.
func strictConfig(raw *runtime.RawExtension, v any) error {
	if raw == nil || len(raw.Raw) == 0 || string(raw.Raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("providerConfig cannot be expressed in a Runtime: %w", err)
	}
	return nil
}
