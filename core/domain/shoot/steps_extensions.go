package shoot

import (
	"fmt"
	"slices"
)

// Names of shoot spec.resources entries the operator adds.
const (
	AuditLogResourceName = "auditlog-credentials"
)

// stepNetworkingFilter always states the filter explicitly: a landscape may enable the extension
// globally, so leaving it out would not switch it off. Ingress filtering is blackholing. A landscape that switched
// the filter off gets none on new shoots and keeps what existing shoots have.
func stepNetworkingFilter(in input, s *Spec) error {
	if in.cfg.Features.DisableNetworkingFilter {
		if in.current != nil {
			s.Extensions = append(s.Extensions, Extension{Type: ExtensionNetworkingFilter, KeepCurrent: true})
		}
		return nil
	}
	s.Extensions = append(s.Extensions, Extension{
		Type:     ExtensionNetworkingFilter,
		Disabled: !in.rt.EgressFilter,
		Config:   NetworkingFilterConfig{Blackholing: in.rt.IngressFilter},
	})
	return nil
}

// stepAuditLog wires the audit log service: the runtime's dedicated tenant when it has claimed one, otherwise the
// shared tenant of its provider and region, when enabled.
func stepAuditLog(in input, s *Spec) error {
	cfg := in.cfg.AuditLog
	if d := in.rt.DedicatedAuditLog; d != nil {
		return dedicatedAuditLog(*d, in.current, auditPolicy(in.rt, cfg), s)
	}
	if !cfg.Enabled {
		return nil
	}
	tenant, ok := cfg.Tenants[in.rt.Provider][in.rt.Region]
	if !ok || tenant.TenantID == "" || tenant.ServiceURL == "" {
		if cfg.MissingTenantIsError {
			return invalid(ReasonAuditLogTenantMissing, "shoot.auditLog.tenants",
				"no audit log tenant configured for provider %s in region %s", in.rt.Provider, in.rt.Region)
		}
		if cur := in.current; cur != nil && cur.AuditLog != nil {
			// The cluster keeps the audit log it has, as with the previous infrastructure manager: a tenant missing
			// from the landscape's list must not switch off a customer's audit trail.
			policy := cur.AuditLog.PolicyConfigMap
			if policy == "" || in.rt.ExperimentalAuditPolicy {
				policy = auditPolicy(in.rt, cfg)
			}
			auditLogExtension(s, cur.AuditLog.TenantID, cur.AuditLog.ServiceURL, cur.AuditLog.SecretName, policy)
			s.AuditLogKept = fmt.Sprintf("no audit log tenant is configured for provider %s in region %s: the cluster keeps its audit log "+
				"(tenant %s) unchanged; add the region's tenant to the landscape configuration (shoot.auditLog.tenants)",
				in.rt.Provider, in.rt.Region, cur.AuditLog.TenantID)
		}
		return nil
	}
	// Each tenant authenticates with its own credentials: the region's Secret, never another region's.
	secret := tenant.Secret(cfg)
	if secret == "" {
		return invalid(ReasonInvalidConfig, "shoot.auditLog.secretName",
			"no audit log credentials secret configured for the tenant of provider %s in region %s", in.rt.Provider, in.rt.Region)
	}
	auditLogExtension(s, tenant.TenantID, tenant.ServiceURL, secret, auditPolicy(in.rt, cfg))
	return nil
}

// PreviousDedicatedAuditLogResourceName is the spec.resources entry the previous infrastructure manager names a
// dedicated tenant's write credentials with when it switches an existing cluster to the tenant.
const PreviousDedicatedAuditLogResourceName = "dedicated-auditlog-credentials"

// dedicatedAuditLog points the cluster at its own tenant with the tenant's own write credentials Secret
// (spec.config.gardenerSecretName): the shared tenant's Secret authenticates for another tenant, so a tenant
// without one cannot be used. A cluster the previous manager already pointed at this tenant keeps its resource
// name, so adopting it changes nothing.
func dedicatedAuditLog(d DedicatedAuditLog, cur *Current, policy string, s *Spec) error {
	if d.TenantID == "" || d.ServiceURL == "" || d.SecretName == "" {
		return invalid(ReasonAuditLogTenantMissing, "status.auditLogCR",
			"the claimed audit log tenant %s lacks spec.subaccountID, spec.config.serviceURL or spec.config.gardenerSecretName; the audit log manager must complete it", d.Name)
	}
	resource := AuditLogResourceName
	if cur != nil && cur.AuditLog != nil && cur.AuditLog.ResourceName == PreviousDedicatedAuditLogResourceName &&
		cur.AuditLog.TenantID == d.TenantID && cur.AuditLog.ServiceURL == d.ServiceURL && cur.AuditLog.SecretName == d.SecretName {
		resource = PreviousDedicatedAuditLogResourceName
	}
	auditLogExtensionAs(s, resource, d.TenantID, d.ServiceURL, d.SecretName, policy)
	return nil
}

// ExperimentalAuditPolicyConfigMap is the audit policy ConfigMap a Runtime selects with the experimental-audit-policy
// annotation; the landscape provides it in the garden project, as for the previous infrastructure manager.
const ExperimentalAuditPolicyConfigMap = "experimental-audit-policy"

// auditPolicy is the audit policy ConfigMap of the runtime's cluster.
func auditPolicy(rt Runtime, cfg AuditLogConfig) string {
	if rt.ExperimentalAuditPolicy {
		return ExperimentalAuditPolicyConfigMap
	}
	return cfg.PolicyConfigMapName
}

func auditLogExtension(s *Spec, tenantID, serviceURL, secret, policy string) {
	auditLogExtensionAs(s, AuditLogResourceName, tenantID, serviceURL, secret, policy)
}

// auditLogExtensionAs adds the extension with its credentials Secret referenced as the spec.resources entry resource.
func auditLogExtensionAs(s *Spec, resource, tenantID, serviceURL, secret, policy string) {
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionAuditLog, Config: AuditLogExtensionConfig{
		TenantID: tenantID, ServiceURL: serviceURL, SecretReferenceName: resource,
	}})
	s.Resources = append(s.Resources, ResourceRef{Name: resource, APIVersion: "v1", Kind: "Secret", TargetName: secret})
	s.AuditPolicyConfigMap = policy
}

// stepDNS sets up the cluster's DNS (shoot.dns.mode). External: the domain "<shoot>.<domainPrefix>" with one
// primary provider. Internal: Gardener's internal domain, no providers. Both enable the DNS and certificate
// services inside the cluster, with DNSProvider replication on, as the landscape's components expect them.
func stepDNS(in input, s *Spec) error {
	dns := in.cfg.DNS
	service := DNSServiceConfig{SyncProvidersFromShootSpecDNS: true, ProviderReplication: true}
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
		// The provider as shoot-dns-service derives it from spec.dns when it syncs (the previous manager wrote
		// it too), so the extension's config is the same before and after the extension's own mutation.
		credentials := DNSCredentialsResourcePrefix + dns.SecretName
		service.Providers = []DNSServiceProvider{{Domains: []string{domain}, Type: dns.ProviderType, Credentials: credentials}}
		// The resource the provider's credentials name; the extension's admission adds the same entry when it
		// syncs, and without it the provider would name nothing.
		s.Resources = append(s.Resources, ResourceRef{Name: credentials, APIVersion: "v1", Kind: "Secret", TargetName: dns.SecretName})
	case DNSModeInternal:
	default:
		return invalid(ReasonInvalidConfig, "shoot.dns.mode", "%q is not one of external, internal, off", mode)
	}
	dnsExtension := Extension{Type: ExtensionDNS, Config: service}
	if in.current != nil && in.current.DNSExtensionWithoutProviders {
		// A cluster created before custom domains keeps its DNS extension as it is (the previous manager's rule).
		dnsExtension = Extension{Type: ExtensionDNS, KeepCurrent: true}
	}
	s.Extensions = append(s.Extensions, dnsExtension, Extension{Type: ExtensionCert, Config: CertServiceConfig{ShootIssuers: true}})
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
