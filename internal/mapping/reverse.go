package mapping

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RuntimeCR is the reverse of Runtime: the Runtime CR, in the shape KEB sends, that maps to rt. It is named by the
// runtime ID in namespace and carries labels (KEB's labels of the runtime). Runtime(RuntimeCR(rt, ...)) gives rt
// back except for the generation (a new CR has none yet) and the pools' domain fields, which are read from their
// Gardener JSON (shoot.Worker.Raw) when it is set.
func RuntimeCR(rt shoot.Runtime, namespace string, labels map[string]string) (*imv1.Runtime, error) {
	cr := &imv1.Runtime{
		TypeMeta:   metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime"},
		ObjectMeta: metav1.ObjectMeta{Name: rt.ID, Namespace: namespace, Labels: maps.Clone(labels)},
	}
	s := &cr.Spec.Shoot
	s.Name, s.Purpose, s.PlatformRegion, s.Region = rt.Name, rt.Purpose, rt.PlatformRegion, rt.Region
	s.SecretBindingName = rt.CredentialsBinding
	s.LicenceType = nonEmpty(rt.LicenceType)
	s.EnforceSeedLocation = ptr.To(rt.EnforceSeedLocation)
	s.EnableNvidiaOpenshell = ptr.To(rt.NvidiaOpenShell)
	s.Kubernetes.Version = nonEmpty(rt.KubernetesVersion)
	api := &s.Kubernetes.KubeAPIServer
	if rt.LegacyOIDC != nil {
		api.OidcConfig = oidcCR(*rt.LegacyOIDC)
	}
	if rt.OIDCGiven {
		list := make([]imv1.OIDCConfig, 0, len(rt.OIDC))
		for _, c := range rt.OIDC {
			list = append(list, oidcCR(c))
		}
		api.AdditionalOidcConfig = &list
	}
	if len(rt.ACL) > 0 {
		api.ACL = &imv1.ACL{AllowedCIDRs: slices.Clone(rt.ACL)}
	}
	s.Provider.Type = string(rt.Provider)
	additional := []gardencorev1beta1.Worker{}
	for i, w := range rt.Workers {
		gw, err := workerCR(w)
		if err != nil {
			return nil, fmt.Errorf("worker pool %s: %w", w.Name, err)
		}
		if i == 0 {
			s.Provider.Workers = []gardencorev1beta1.Worker{gw}
			continue
		}
		additional = append(additional, gw)
	}
	s.Provider.AdditionalWorkers = &additional
	s.Networking = imv1.Networking{Type: nonEmpty(rt.Networking.Type), Pods: rt.Networking.Pods, Nodes: rt.Networking.Nodes,
		Services: rt.Networking.Services}
	if rt.Networking.DualStack {
		s.Networking.DualStack = ptr.To(true)
	}
	if rt.HAFailureTolerance != "" {
		s.ControlPlane = &gardencorev1beta1.ControlPlane{HighAvailability: &gardencorev1beta1.HighAvailability{
			FailureTolerance: gardencorev1beta1.FailureTolerance{Type: gardencorev1beta1.FailureToleranceType(rt.HAFailureTolerance)}}}
	}
	cr.Spec.Security.Administrators = append([]string{}, rt.Administrators...)
	cr.Spec.Security.Networking.Filter.Egress.Enabled = rt.EgressFilter
	cr.Spec.Security.Networking.Filter.Ingress = &imv1.Ingress{Enabled: rt.IngressFilter}
	for _, c := range rt.RegistryCaches {
		if c.CredentialsSecret != c.SecretReferenceName {
			return nil, fmt.Errorf("registry cache %s: the credentials Secret %q must be named as its reference %q", c.Upstream, c.CredentialsSecret, c.SecretReferenceName)
		}
		cr.Spec.ImageRegistryCache = append(cr.Spec.ImageRegistryCache, registryCacheCR(c))
	}
	return cr, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return ptr.To(s)
}

func oidcCR(c shoot.OIDC) imv1.OIDCConfig {
	out := imv1.OIDCConfig{
		IssuerURL: nonEmpty(c.IssuerURL), ClientID: nonEmpty(c.ClientID), UsernameClaim: nonEmpty(c.UsernameClaim),
		GroupsClaim: nonEmpty(c.GroupsClaim), CABundle: nonEmpty(c.CABundle), SigningAlgs: slices.Clone(c.SigningAlgs),
		RequiredClaims: maps.Clone(c.RequiredClaims), JWKS: slices.Clone(c.JWKS),
	}
	if c.UsernamePrefix != nil {
		out.UsernamePrefix = ptr.To(*c.UsernamePrefix)
	}
	if c.GroupsPrefix != nil {
		out.GroupsPrefix = ptr.To(*c.GroupsPrefix)
	}
	return out
}

// workerCR is the pool in Gardener's shape: its JSON as recorded (every field passes through), else built from
// the domain fields.
func workerCR(w shoot.Worker) (gardencorev1beta1.Worker, error) {
	var gw gardencorev1beta1.Worker
	if len(w.Raw) > 0 {
		if err := json.Unmarshal(w.Raw, &gw); err != nil {
			return gardencorev1beta1.Worker{}, fmt.Errorf("decode pool: %w", err)
		}
		return gw, nil
	}
	gw.Name, gw.Machine.Type, gw.Minimum, gw.Maximum = w.Name, w.MachineType, w.Minimum, w.Maximum
	gw.Machine.Image = &gardencorev1beta1.ShootMachineImage{Name: w.ImageName, Version: ptr.To(w.ImageVersion)}
	gw.Zones, gw.Labels, gw.Annotations = slices.Clone(w.Zones), maps.Clone(w.Labels), maps.Clone(w.Annotations)
	if w.VolumeSize != "" {
		gw.Volume = &gardencorev1beta1.Volume{VolumeSize: w.VolumeSize, Type: nonEmpty(w.VolumeType)}
	}
	return gw, nil
}

func registryCacheCR(c shoot.RegistryCache) imv1.ImageRegistryCache {
	// KEB's name of the cache configuration is not on the shoot; the upstream identifies the cache.
	return imv1.ImageRegistryCache{Name: c.Upstream, Config: RegistryCacheConfig(c)}
}

// RegistryCacheConfig is the inverse of RegistryCache: unset domain fields are absent from the configuration.
func RegistryCacheConfig(c shoot.RegistryCache) imv1.RegistryCacheConfig {
	cfg := imv1.RegistryCacheConfig{Upstream: c.Upstream, RemoteURL: nonEmpty(c.RemoteURL), SecretReferenceName: nonEmpty(c.SecretReferenceName)}
	if c.VolumeSize != "" || c.VolumeStorageClass != "" {
		cfg.Volume = &imv1.RegistryCacheVolume{Size: nonEmpty(c.VolumeSize), StorageClassName: nonEmpty(c.VolumeStorageClass)}
	}
	if c.GarbageCollectionTTL != "" {
		cfg.GarbageCollection = &imv1.RegistryCacheGarbageCollection{TTL: c.GarbageCollectionTTL}
	}
	if c.HTTPProxy != "" || c.HTTPSProxy != "" {
		cfg.Proxy = &imv1.RegistryCacheProxy{HTTPProxy: nonEmpty(c.HTTPProxy), HTTPSProxy: nonEmpty(c.HTTPSProxy)}
	}
	if c.TLS != nil {
		cfg.HTTP = &imv1.RegistryCacheHTTP{TLS: ptr.To(*c.TLS)}
	}
	return cfg
}
