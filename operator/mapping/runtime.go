// Package mapping converts the Runtime CR (operator/api/v1) into the domain input of shoot generation.
package mapping

import (
	gardener "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	imv1 "github.com/kyma-project/kim/operator/api/v1"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Runtime maps a Runtime CR to shoot.Runtime. It does not validate: shoot.Generate does, with
// errors that name the CR fields.
func Runtime(cr *imv1.Runtime) shoot.Runtime {
	s := cr.Spec.Shoot
	id := cr.Labels[imv1.LabelRuntimeID]
	if id == "" {
		id = cr.Name
	}
	rt := shoot.Runtime{
		ID:                  id,
		Generation:          cr.Generation,
		GlobalAccountID:     cr.Labels[imv1.LabelGlobalAccountID],
		SubaccountID:        cr.Labels[imv1.LabelSubaccountID],
		Name:                s.Name,
		Purpose:             s.Purpose,
		PlatformRegion:      s.PlatformRegion,
		Region:              s.Region,
		CredentialsBinding:  s.SecretBindingName,
		LicenceType:         ptr.Deref(s.LicenceType, ""),
		EnforceSeedLocation: ptr.Deref(s.EnforceSeedLocation, false),
		KubernetesVersion:   ptr.Deref(s.Kubernetes.Version, ""),
		Provider:            shoot.Provider(s.Provider.Type),
		Networking: shoot.Networking{
			Type: ptr.Deref(s.Networking.Type, ""), Pods: s.Networking.Pods, Nodes: s.Networking.Nodes,
			Services: s.Networking.Services, DualStack: ptr.Deref(s.Networking.DualStack, false),
		},
		Administrators: append([]string(nil), cr.Spec.Security.Administrators...),
		EgressFilter:   cr.Spec.Security.Networking.Filter.Egress.Enabled,
		IngressFilter:  cr.Spec.Security.Networking.Filter.Ingress != nil && cr.Spec.Security.Networking.Filter.Ingress.Enabled,
	}
	api := s.Kubernetes.KubeAPIServer
	// KEB sends oidcConfig as {}; only a configured issuer counts.
	if ptr.Deref(api.OidcConfig.IssuerURL, "") != "" {
		rt.OIDC = append(rt.OIDC, oidc(api.OidcConfig))
	}
	if api.AdditionalOidcConfig != nil {
		for _, c := range *api.AdditionalOidcConfig {
			rt.OIDC = append(rt.OIDC, oidc(c))
		}
	}
	if api.ACL != nil {
		rt.ACL = append([]string(nil), api.ACL.AllowedCIDRs...)
	}
	for _, w := range s.Provider.Workers {
		rt.Workers = append(rt.Workers, worker(w))
	}
	if s.Provider.AdditionalWorkers != nil {
		for _, w := range *s.Provider.AdditionalWorkers {
			rt.Workers = append(rt.Workers, worker(w))
		}
	}
	if cp := s.ControlPlane; cp != nil && cp.HighAvailability != nil {
		rt.HAFailureTolerance = string(cp.HighAvailability.FailureTolerance.Type)
	}
	for _, c := range cr.Spec.ImageRegistryCache {
		rt.RegistryCaches = append(rt.RegistryCaches, registryCache(c))
	}
	return rt
}

func oidc(c imv1.OIDCConfig) shoot.OIDC {
	return shoot.OIDC{
		IssuerURL: ptr.Deref(c.IssuerURL, ""), ClientID: ptr.Deref(c.ClientID, ""),
		UsernameClaim: ptr.Deref(c.UsernameClaim, ""), UsernamePrefix: c.UsernamePrefix,
		GroupsClaim: ptr.Deref(c.GroupsClaim, ""), GroupsPrefix: c.GroupsPrefix,
		SigningAlgs: append([]string(nil), c.SigningAlgs...), RequiredClaims: c.RequiredClaims, JWKS: c.JWKS,
	}
}

func worker(w gardener.Worker) shoot.Worker {
	out := shoot.Worker{
		Name: w.Name, MachineType: w.Machine.Type, Minimum: w.Minimum, Maximum: w.Maximum,
		Zones: append([]string(nil), w.Zones...), Labels: w.Labels, Annotations: w.Annotations,
	}
	if img := w.Machine.Image; img != nil {
		out.ImageName, out.ImageVersion = img.Name, ptr.Deref(img.Version, "")
	}
	if w.MaxSurge != nil {
		out.MaxSurge = w.MaxSurge.String()
	}
	if w.MaxUnavailable != nil {
		out.MaxUnavailable = w.MaxUnavailable.String()
	}
	if w.Volume != nil {
		out.VolumeType, out.VolumeSize = ptr.Deref(w.Volume.Type, ""), w.Volume.VolumeSize
	}
	for _, t := range w.Taints {
		out.Taints = append(out.Taints, shoot.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	if w.CRI != nil {
		out.CRI = string(w.CRI.Name)
	}
	if w.Kubernetes != nil && w.Kubernetes.Kubelet != nil && w.Kubernetes.Kubelet.MaxPods != nil {
		out.MaxPods = ptr.To(*w.Kubernetes.Kubelet.MaxPods)
	}
	return out
}

func registryCache(c imv1.ImageRegistryCache) shoot.RegistryCache {
	cfg := c.Config
	out := shoot.RegistryCache{
		Upstream: cfg.Upstream, RemoteURL: ptr.Deref(cfg.RemoteURL, ""),
		SecretReferenceName: ptr.Deref(cfg.SecretReferenceName, ""),
	}
	// The controller copies the referenced credentials into the project namespace under the same name.
	out.CredentialsSecret = out.SecretReferenceName
	if v := cfg.Volume; v != nil {
		out.VolumeSize, out.VolumeStorageClass = ptr.Deref(v.Size, ""), ptr.Deref(v.StorageClassName, "")
	}
	if gc := cfg.GarbageCollection; gc != nil {
		out.GarbageCollectionTTL = gc.TTL
	}
	if p := cfg.Proxy; p != nil {
		out.HTTPProxy, out.HTTPSProxy = ptr.Deref(p.HTTPProxy, ""), ptr.Deref(p.HTTPSProxy, "")
	}
	if h := cfg.HTTP; h != nil {
		out.TLS = ptr.To(h.TLS)
	}
	return out
}
