package shoot

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names of shoot spec.resources entries the operator adds.
const (
	AuditLogResourceName = "auditlog-credentials"
)

// stepNetworkingFilter always states the filter explicitly: a landscape may enable the extension
// globally, so leaving it out would not switch it off. Ingress filtering is blackholing.
func stepNetworkingFilter(in input, s *Spec) error {
	s.Extensions = append(s.Extensions, Extension{
		Type:     ExtensionNetworkingFilter,
		Disabled: !in.rt.EgressFilter,
		Config:   NetworkingFilterConfig{Blackholing: in.rt.IngressFilter},
	})
	return nil
}

// stepRegistryCache configures pull-through caches; with none, the extension is left out, which on
// update removes it.
func stepRegistryCache(in input, s *Spec) error {
	if len(in.rt.RegistryCaches) == 0 {
		return nil
	}
	caches := make([]RegistryCache, 0, len(in.rt.RegistryCaches))
	seen := map[string]bool{}
	for i, c := range in.rt.RegistryCaches {
		field := fmt.Sprintf("spec.imageRegistryCache[%d]", i)
		switch {
		case !registryHost(c.Upstream):
			return invalid(ReasonInvalidRegistryCache, field+".upstream", "%q must be a registry host name", c.Upstream)
		case seen[c.Upstream]:
			return invalid(ReasonInvalidRegistryCache, field+".upstream", "upstream %q is cached twice", c.Upstream)
		case c.VolumeSize != "" && !positiveQuantity(c.VolumeSize):
			return invalid(ReasonInvalidRegistryCache, field+".volume.size", "%q must be a positive quantity, e.g. 10Gi or 500M", c.VolumeSize)
		case (c.SecretReferenceName == "") != (c.CredentialsSecret == ""):
			return invalid(ReasonInvalidRegistryCache, field+".secretReferenceName", "secret reference and credentials secret must be set together")
		}
		for _, proxy := range []struct{ field, url string }{{"httpProxy", c.HTTPProxy}, {"httpsProxy", c.HTTPSProxy}} {
			if proxy.url != "" && !proxyURL(proxy.url) {
				return invalid(ReasonInvalidRegistryCache, field+".proxy."+proxy.field, "%q must be an http:// or https:// URL with a host", proxy.url)
			}
		}
		if c.GarbageCollectionTTL != "" {
			if d, err := time.ParseDuration(c.GarbageCollectionTTL); err != nil || d < 0 {
				return invalid(ReasonInvalidRegistryCache, field+".garbageCollection.ttl", "%q is not a duration like 168h", c.GarbageCollectionTTL)
			}
		}
		seen[c.Upstream] = true
		caches = append(caches, c)
		if c.SecretReferenceName != "" {
			s.Resources = append(s.Resources, ResourceRef{Name: c.SecretReferenceName, APIVersion: "v1", Kind: "Secret", TargetName: c.CredentialsSecret})
		}
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionRegistryCache, Config: RegistryCacheConfig{Caches: caches}})
	return nil
}

// proxyURL accepts absolute http(s) URLs with a host, as the registry-cache extension passes them to the cache.
func proxyURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// registryHost accepts "host" or "host:port" with a DNS subdomain host.
func registryHost(v string) bool {
	host, port, hasPort := strings.Cut(v, ":")
	if hasPort {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return isDNSSubdomain(host)
}

func isDNSSubdomain(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) > 63 || !dnsLabel.MatchString(label) {
			return false
		}
	}
	return true
}

// stepAuditLog wires the audit log service for the provider and region, when enabled.
func stepAuditLog(in input, s *Spec) error {
	cfg := in.cfg.AuditLog
	if !cfg.Enabled {
		return nil
	}
	if cfg.SecretName == "" {
		return invalid(ReasonInvalidConfig, "shoot.auditLog.secretName", "the audit log credentials secret must be configured")
	}
	tenant, ok := cfg.Tenants[in.rt.Provider][in.rt.Region]
	if !ok || tenant.TenantID == "" || tenant.ServiceURL == "" {
		if cfg.MissingTenantIsError {
			return invalid(ReasonAuditLogTenantMissing, "shoot.auditLog.tenants",
				"no audit log tenant configured for provider %s in region %s", in.rt.Provider, in.rt.Region)
		}
		return nil
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionAuditLog, Config: AuditLogExtensionConfig{
		TenantID: tenant.TenantID, ServiceURL: tenant.ServiceURL, SecretReferenceName: AuditLogResourceName,
	}})
	s.Resources = append(s.Resources, ResourceRef{Name: AuditLogResourceName, APIVersion: "v1", Kind: "Secret", TargetName: cfg.SecretName})
	s.AuditPolicyConfigMap = cfg.PolicyConfigMapName
	return nil
}

// stepDNS sets up the cluster's DNS (shoot.dns.mode). External: the domain "<shoot>.<domainPrefix>" with one
// primary provider. Internal: Gardener's internal domain, no providers. Both enable the DNS and certificate
// services inside the cluster, with DNSProvider replication on, as the landscape's components expect them.
func stepDNS(in input, s *Spec) error {
	dns := in.cfg.DNS
	switch mode := dnsMode(dns); mode {
	case DNSModeOff:
		return nil
	case DNSModeExternal:
		if dns.DomainPrefix == "" || dns.SecretName == "" || dns.ProviderType == "" {
			return invalid(ReasonInvalidConfig, "shoot.dns", "external DNS needs domainPrefix, secretName and providerType")
		}
		domain := in.rt.Name + "." + dns.DomainPrefix
		if !isDNSSubdomain(domain) {
			return invalid(ReasonInvalidConfig, "shoot.dns.domainPrefix", "%q does not form a valid domain", domain)
		}
		s.DNS = &DNS{Domain: domain, ProviderType: dns.ProviderType, SecretName: dns.SecretName}
	case DNSModeInternal:
	default:
		return invalid(ReasonInvalidConfig, "shoot.dns.mode", "%q is not one of external, internal, off", mode)
	}
	s.Extensions = append(s.Extensions,
		Extension{Type: ExtensionDNS, Config: DNSServiceConfig{SyncProvidersFromShootSpecDNS: true, ProviderReplication: true}},
		Extension{Type: ExtensionCert, Config: CertServiceConfig{ShootIssuers: true}},
	)
	return nil
}

func dnsMode(dns DNSConfig) string {
	switch {
	case dns.Mode != "":
		return dns.Mode
	case dns.DomainPrefix != "":
		return DNSModeExternal
	}
	return DNSModeOff
}

// stepOIDCExtension enables shoot-oidc-service (shoot.oidcExtension): by default when the cluster has customer
// issuers, which are served inside the cluster through it as OpenIDConnect resources. It is never disabled by the operator (see ExtensionOIDC).
func stepOIDCExtension(in input, s *Spec) error {
	switch mode := in.cfg.OIDCExtension; mode {
	case OIDCExtensionNever:
		if cs := customerIssuers(in); len(cs) > 0 {
			// Customer issuers are served only through the extension: dropping them silently would lock the
			// customer out.
			return invalid(ReasonOIDCExtensionDisabled, cs[0].Field,
				"customer OIDC issuers are served by the shoot-oidc-service extension, which shoot.oidcExtension=never turns off; "+
					"remove the issuers or ask the landscape operators to allow the extension")
		}
		return nil
	case OIDCExtensionAlways:
	case "", OIDCExtensionCustomerIssuers:
		// Once enabled it stays: it is applied again rather than left out, which would remove it.
		enabled := in.current != nil && slices.Contains(in.current.ExtensionTypes, ExtensionOIDC)
		if len(customerIssuers(in)) == 0 && !enabled {
			return nil
		}
	default:
		return invalid(ReasonInvalidConfig, "shoot.oidcExtension", "%q is not one of customer-issuers, always, never", mode)
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionOIDC})
	return nil
}

// stepNvidiaOpenShell enables the NVIDIA OpenShell extension when the Runtime asks for it (enableNvidiaOpenshell);
// without it the extension is left out, which removes it from an existing cluster.
func stepNvidiaOpenShell(in input, s *Spec) error {
	if in.rt.NvidiaOpenShell {
		s.Extensions = append(s.Extensions, Extension{Type: ExtensionNvidiaOpenShell})
	}
	return nil
}
