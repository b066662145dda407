// Package mapping converts the Runtime CR (operator/api/v1) into the domain input of shoot generation.
package mapping

import (
	"strings"

	"encoding/json"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	imv1 "github.com/kyma-project/kim/operator/api/v1"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// RuntimeID is the runtime ID of a Runtime CR: its name, which the shoot, the GardenerCluster and the kubeconfig
// Secret are keyed by, whatever the runtime-id label says. The one place this rule is written.
func RuntimeID(cr *imv1.Runtime) string { return cr.Name }

// Runtime maps a Runtime CR to shoot.Runtime. It does not validate: shoot.Generate does, with
// errors that name the CR fields.
func Runtime(cr *imv1.Runtime) shoot.Runtime {
	s := cr.Spec.Shoot
	rt := shoot.Runtime{
		ID:                  RuntimeID(cr),
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
		NvidiaOpenShell:     ptr.Deref(s.EnableNvidiaOpenshell, false),
		// Any case, as the previous infrastructure manager reads it.
		ExperimentalAuditPolicy: strings.EqualFold(cr.Annotations[imv1.AnnotationExperimentalAuditPolicy], "true"),
		KubernetesVersion:       ptr.Deref(s.Kubernetes.Version, ""),
		Provider:                shoot.Provider(s.Provider.Type),
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
		legacy := oidc(api.OidcConfig)
		rt.LegacyOIDC = &legacy
	}
	// Absent means "the default customer issuer", present and empty means "none": keep the difference.
	if api.AdditionalOidcConfig != nil {
		rt.OIDCGiven = true
		rt.OIDC = []shoot.OIDC{}
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
		rt.RegistryCaches = append(rt.RegistryCaches, RegistryCache(c.Config))
	}
	return rt
}

func oidc(c imv1.OIDCConfig) shoot.OIDC {
	return shoot.OIDC{
		IssuerURL: ptr.Deref(c.IssuerURL, ""), ClientID: ptr.Deref(c.ClientID, ""),
		UsernameClaim: ptr.Deref(c.UsernameClaim, ""), UsernamePrefix: c.UsernamePrefix,
		GroupsClaim: ptr.Deref(c.GroupsClaim, ""), GroupsPrefix: c.GroupsPrefix,
		SigningAlgs: append([]string(nil), c.SigningAlgs...), RequiredClaims: c.RequiredClaims, JWKS: c.JWKS,
		CABundle: ptr.Deref(c.CABundle, ""),
	}
}

func worker(w gardencorev1beta1.Worker) shoot.Worker {
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
		for _, cr := range w.CRI.ContainerRuntimes {
			out.ContainerRuntimes = append(out.ContainerRuntimes, shoot.ContainerRuntime{Type: cr.Type, ConfigFlags: configFlags(cr.ProviderConfig)})
		}
	}
	if w.Kubernetes != nil && w.Kubernetes.Kubelet != nil && w.Kubernetes.Kubelet.MaxPods != nil {
		out.MaxPods = ptr.To(*w.Kubernetes.Kubelet.MaxPods)
	}
	if m := w.MachineControllerManagerSettings; m != nil {
		if m.MachineDrainTimeout != nil {
			out.MachineDrainTimeout = m.MachineDrainTimeout.Duration.String()
		}
		if m.MaxEvictRetries != nil {
			out.MaxEvictRetries = ptr.To(*m.MaxEvictRetries)
		}
	}
	// Everything else of the pool passes through to the shoot unchanged; a pool that cannot be encoded (it
	// came from JSON) keeps the fields above only.
	if raw, err := json.Marshal(w); err == nil {
		out.Raw = raw
	}
	return out
}

// configFlags reads a container runtime's providerConfig.configFlags (gVisor's flags) as strings; nil when it has
// none or the config is not an object.
func configFlags(cfg *runtime.RawExtension) map[string]string {
	if cfg == nil || len(cfg.Raw) == 0 {
		return nil
	}
	var c struct {
		ConfigFlags map[string]any `json:"configFlags"`
	}
	if err := json.Unmarshal(cfg.Raw, &c); err != nil || len(c.ConfigFlags) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.ConfigFlags))
	for k, v := range c.ConfigFlags {
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(v) // the runtime reads strings only
		}
	}
	return out
}

// RegistryCache maps a registry cache configuration of a Runtime (spec.imageRegistryCache[].config) to the
// domain: the one mapping, used for shoot generation and by the registry cache controller's adapter alike.
// RegistryCacheConfig is its inverse.
func RegistryCache(cfg imv1.RegistryCacheConfig) shoot.RegistryCache {
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
	if h := cfg.HTTP; h != nil && h.TLS != nil {
		out.TLS = ptr.To(*h.TLS)
	}
	return out
}
