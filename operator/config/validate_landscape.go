package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kyma-project/kim/core/domain/shoot"
)

var (
	featureGate    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	runtimeConfig  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[a-z0-9]+){1,2}$`)
	labelValue     = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	tolerationKey  = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$`)
	dnsSubdomain   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dualStackable  = map[string]bool{"aws": true, "gcp": true}
	oidcExtensions = map[string]bool{"": true, shoot.OIDCExtensionCustomerIssuers: true, shoot.OIDCExtensionAlways: true, shoot.OIDCExtensionNever: true}
	dnsModes       = map[string]bool{"": true, shoot.DNSModeExternal: true, shoot.DNSModeInternal: true, shoot.DNSModeOff: true}
)

// validateLandscape checks the keys of the 2025-26 landscape features; each problem names its key.
func validateLandscape(s ShootConfig, bad func(key, format string, args ...any)) {
	validateDNS(s.DNS, bad)
	if s.OIDC != nil {
		validateOIDC("shoot.oidc", *s.OIDC, bad)
	}
	for i, o := range s.OperatorOIDC {
		validateOIDC(fmt.Sprintf("shoot.operatorOIDC[%d]", i), o, bad)
	}
	validateAuthenticationStyle(s, bad)
	if !oidcExtensions[s.OIDCExtension] {
		bad("shoot.oidcExtension", "must be customer-issuers, always or never, got %q", s.OIDCExtension)
	}
	if ref := s.GDCH.ParentReference; ref.Name == "" && (ref.Namespace != "" || ref.Type != "" || s.GDCH.EnableEgress) {
		bad("shoot.gdch.parentReference.name", "must be set when shoot.gdch is configured")
	}
	if r := s.EUAccess.PlatformRegions; r != nil {
		for i, region := range *r {
			if strings.TrimSpace(region) == "" {
				bad(fmt.Sprintf("shoot.euAccess.platformRegions[%d]", i), "must not be empty")
			}
		}
	}
	for _, region := range sortedKeys(s.Tolerations) {
		seen := map[string]bool{}
		for i, t := range s.Tolerations[region] {
			key := fmt.Sprintf("shoot.tolerations.%s[%d]", region, i)
			// Gardener's rules for spec.tolerations (a label name as key, a label value as value); one entry per key, as
			// the shoot keeps one per key.
			switch {
			case len(t.Key) > 253 || !tolerationKey.MatchString(t.Key):
				bad(key, "%q is not a toleration key", t.Key)
			case seen[t.Key]:
				bad(key, "toleration key %q is given twice for the region: one entry per key", t.Key)
			}
			if t.Value != "" && (len(t.Value) > 63 || !labelValue.MatchString(t.Value)) {
				bad(key+".value", "%q is not a toleration value (a label value)", t.Value)
			}
			seen[t.Key] = true
		}
	}
	validateACL(s.ACL, bad)
	for i, p := range s.DualStack.Providers {
		if !dualStackable[p] {
			bad(fmt.Sprintf("shoot.dualStack.providers[%d]", i), "%q does not support dual-stack networking; use aws or gcp", p)
		}
	}
	if d := s.Workers.MachineDrainTimeout; d != nil && d.Duration < 0 {
		bad("shoot.workers.machineDrainTimeout", "must not be negative")
	}
	if r := s.Workers.MaxEvictRetries; r != nil && *r < 0 {
		bad("shoot.workers.maxEvictRetries", "must not be negative")
	}
	validateGates("shoot.kubeAPIServer.featureGates", s.KubeAPIServer.FeatureGates, bad)
	validateGates("shoot.kubelet.featureGates", s.Kubelet.FeatureGates, bad)
	for _, key := range sortedKeys(s.KubeAPIServer.RuntimeConfig) {
		if !runtimeConfig.MatchString(key) {
			bad("shoot.kubeAPIServer.runtimeConfig."+key, "is not an API group/version like resource.k8s.io/v1beta1")
		}
	}
	if d := s.KubeAPIServer.MaxTokenExpiration; d != nil && d.Duration < 0 {
		bad("shoot.kubeAPIServer.maxTokenExpiration", "must not be negative (values outside %s..%s are clamped)", shoot.MinTokenExpiration, shoot.MaxTokenExpiration)
	}
	g := s.CleanupGracePeriods
	for key, v := range map[string]*int64{"extendedAPIs": g.ExtendedAPIs, "kubernetesResources": g.KubernetesResources, "webhooks": g.Webhooks} {
		if v != nil && *v < 0 {
			bad("shoot.cleanupGracePeriods."+key, "must not be negative")
		}
	}
}

func validateDNS(d DNSConfig, bad func(key, format string, args ...any)) {
	if !dnsModes[d.Mode] {
		bad("shoot.dns.mode", "must be external, internal or off, got %q", d.Mode)
		return
	}
	external := d.Mode == shoot.DNSModeExternal || (d.Mode == "" && d.DomainPrefix != "")
	if external {
		for key, v := range map[string]string{"domainPrefix": d.DomainPrefix, "secretName": d.SecretName, "providerType": d.ProviderType} {
			if v == "" {
				bad("shoot.dns."+key, "must be set for external DNS (shoot.dns.domainPrefix or shoot.dns.mode: external)")
			}
		}
		return
	}
	for key, v := range map[string]string{"domainPrefix": d.DomainPrefix, "secretName": d.SecretName, "providerType": d.ProviderType} {
		if v != "" {
			bad("shoot.dns."+key, "must be empty with shoot.dns.mode %s", d.Mode)
		}
	}
}

func validateOIDC(key string, o OIDCConfig, bad func(key, format string, args ...any)) {
	if !httpsURL(o.IssuerURL) {
		bad(key+".issuerURL", "must be an https URL, got %q", o.IssuerURL)
	}
	if o.ClientID == "" {
		bad(key+".clientID", "must not be empty")
	}
	if o.CABundle != "" && !shoot.ValidPEMCertificates(o.CABundle) {
		bad(key+".caBundle", "must be one or more PEM-encoded certificates")
	}
}

// Values of shoot.authenticationStyle.
const (
	AuthenticationStyleKIM      = "kim"
	AuthenticationStylePrevious = "previous"
)

// validateAuthenticationStyle refuses what the previous manager's rules cannot carry, instead of dropping it.
func validateAuthenticationStyle(s ShootConfig, bad func(key, format string, args ...any)) {
	switch s.AuthenticationStyle {
	case "", AuthenticationStyleKIM:
	case AuthenticationStylePrevious:
		if len(s.OperatorOIDC) > 1 {
			bad("shoot.authenticationStyle", "previous trusts one operator issuer, but shoot.operatorOIDC lists %d: use kim", len(s.OperatorOIDC))
		}
		for i, o := range s.OperatorOIDC {
			if o.CABundle != "" {
				bad(fmt.Sprintf("shoot.operatorOIDC[%d].caBundle", i), "the previous manager's rules write no CA bundle: use shoot.authenticationStyle kim")
			}
		}
	default:
		bad("shoot.authenticationStyle", "must be kim or previous, got %q", s.AuthenticationStyle)
	}
}

func validateACL(a ACLConfig, bad func(key, format string, args ...any)) {
	for i, p := range a.Providers {
		if !providers[p] {
			bad(fmt.Sprintf("shoot.acl.providers[%d]", i), "unknown provider %q", p)
		}
	}
	if a.ConfigMap == nil {
		if a.Enabled {
			bad("shoot.acl.configMap", "must name the KCP ConfigMap with the operator's and KCP's egress CIDRs when shoot.acl.enabled is true")
		}
		return
	}
	if a.ConfigMap.Name == "" || len(a.ConfigMap.Name) > 253 || !dnsSubdomain.MatchString(a.ConfigMap.Name) {
		bad("shoot.acl.configMap.name", "%q is not a ConfigMap name", a.ConfigMap.Name)
	}
	if ns := a.ConfigMap.Namespace; ns != "" && (len(ns) > 63 || !dnsLabel.MatchString(ns)) {
		bad("shoot.acl.configMap.namespace", "%q is not a namespace name", ns)
	}
}

func validateGates(key string, gates map[string]bool, bad func(key, format string, args ...any)) {
	for _, name := range sortedKeys(gates) {
		if !featureGate.MatchString(name) {
			bad(key+"."+name, "is not a feature gate name")
		}
	}
}

// landscapeConfig converts the landscape keys into the domain configuration.
func (c *OperatorConfig) landscapeConfig(out *shoot.Config) {
	s := c.Shoot
	out.DNS.Mode = s.DNS.Mode
	for _, o := range s.OperatorOIDC {
		out.OperatorOIDC = append(out.OperatorOIDC, domainOIDC(o))
	}
	out.PreviousAuthentication = s.AuthenticationStyle == AuthenticationStylePrevious
	out.OIDCExtension = s.OIDCExtension
	ref := s.GDCH.ParentReference
	out.GDCH = shoot.GDCHConfig{EnableEgress: s.GDCH.EnableEgress,
		ParentReference: shoot.GDCHParentReference{Name: ref.Name, Namespace: ref.Namespace, Type: ref.Type}}
	if r := s.EUAccess.PlatformRegions; r != nil {
		out.EUAccessPlatformRegions = append([]string{}, *r...)
	}
	if s.Tolerations != nil {
		out.RegionTolerations = map[string][]shoot.Toleration{}
		for region, list := range s.Tolerations {
			out.RegionTolerations[region] = []shoot.Toleration{}
			for _, t := range list {
				out.RegionTolerations[region] = append(out.RegionTolerations[region], shoot.Toleration{Key: t.Key, Value: t.Value})
			}
		}
	}
	out.ACL.Enabled = s.ACL.Enabled
	for _, p := range s.ACL.Providers {
		out.ACL.Providers = append(out.ACL.Providers, shoot.Provider(p))
	}
	for _, p := range s.DualStack.Providers {
		out.DualStack = append(out.DualStack, shoot.Provider(p))
	}
	if d := s.Workers.MachineDrainTimeout; d != nil {
		out.Workers.MachineDrainTimeout = d.String()
	}
	if r := s.Workers.MaxEvictRetries; r != nil {
		v := *r
		out.Workers.MaxEvictRetries = &v
	}
	out.KubeAPIServer = shoot.KubeAPIServerConfig{FeatureGates: s.KubeAPIServer.FeatureGates, RuntimeConfig: s.KubeAPIServer.RuntimeConfig}
	if d := s.KubeAPIServer.MaxTokenExpiration; d != nil {
		out.KubeAPIServer.MaxTokenExpiration = d.Duration
	}
	out.Kubelet.FeatureGates = s.Kubelet.FeatureGates
	g := s.CleanupGracePeriods
	out.CleanupGracePeriods = shoot.CleanupGracePeriods{ExtendedAPIs: g.ExtendedAPIs, KubernetesResources: g.KubernetesResources, Webhooks: g.Webhooks}
}

func domainOIDC(o OIDCConfig) shoot.OIDC {
	return shoot.OIDC{
		IssuerURL: o.IssuerURL, ClientID: o.ClientID, UsernameClaim: o.UsernameClaim, UsernamePrefix: o.UsernamePrefix,
		GroupsClaim: o.GroupsClaim, GroupsPrefix: o.GroupsPrefix, SigningAlgs: o.SigningAlgs, CABundle: o.CABundle,
	}
}
