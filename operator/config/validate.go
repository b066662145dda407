package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
)

// maxIdentityCleanupTimeout caps serviceAccountKubeconfigs.cleanupTimeout: a deleted request should not hang for
// longer than a day on a runtime that never answers.
const maxIdentityCleanupTimeout = 24 * time.Hour

var (
	dnsLabel          = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	kubernetesVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`)
	windowTime        = regexp.MustCompile(`^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-][0-9]{4}$`)
	providers         = map[string]bool{"aws": true, "azure": true, "gcp": true, "openstack": true, "alicloud": true, "gdch": true}
)

// Validate reports every invalid key as "<key path>: <problem>", joined.
func (c *OperatorConfig) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.APIVersion != APIVersion {
		bad("apiVersion", "must be %s, got %q", APIVersion, c.APIVersion)
	}
	if c.Kind != Kind {
		bad("kind", "must be %s, got %q", Kind, c.Kind)
	}
	switch {
	case c.Gardener.Project == "":
		bad("gardener.project", "must not be empty")
	case len(c.Gardener.Project) > 63 || !dnsLabel.MatchString(c.Gardener.Project):
		bad("gardener.project", "%q is not a valid project name", c.Gardener.Project)
	}
	s := c.Shoot
	if !kubernetesVersion.MatchString(s.DefaultKubernetesVersion) {
		bad("shoot.defaultKubernetesVersion", "must be a version like 1.33 or 1.33.2, got %q", s.DefaultKubernetesVersion)
	}
	if s.DefaultMachineImage.Name == "" {
		bad("shoot.defaultMachineImage.name", "must not be empty")
	}
	for _, p := range sortedKeys(s.CloudProfiles) {
		if !providers[p] {
			bad("shoot.cloudProfiles."+p, "unknown provider; use aws, azure, gcp, openstack, alicloud or gdch")
		} else if s.CloudProfiles[p] == "" {
			bad("shoot.cloudProfiles."+p, "must not be empty")
		}
	}
	validateLandscape(s, bad)
	validateAuditLog(s.AuditLog, bad)
	validateRegistryCache(c.RegistryCache, bad)
	for _, region := range sortedKeys(s.Maintenance.Windows) {
		w := s.Maintenance.Windows[region]
		if !windowTime.MatchString(w.Begin) {
			bad("shoot.maintenance.windows."+region+".begin", "must look like 220000+0000, got %q", w.Begin)
		}
		if !windowTime.MatchString(w.End) {
			bad("shoot.maintenance.windows."+region+".end", "must look like 230000+0000, got %q", w.End)
		}
	}
	validateRuntime(c.Runtime, bad)
	d := c.Deletion
	if d.ForceDeletionAfter.Duration < 0 {
		bad("deletion.forceDeletionAfter", "must be positive")
	}
	if d.MaxGracePeriod.Duration <= 0 {
		bad("deletion.maxGracePeriod", "must be positive: it is the data-privacy cap of every window and cannot be switched off")
	}
	if d.Budget.Limit != nil && *d.Budget.Limit < 1 {
		bad("deletion.budget.limit", "must be at least 1 (to stop all deletions, set the emergency brake instead)")
	}
	if d.Budget.Period.Duration <= 0 {
		bad("deletion.budget.period", "must be positive")
	}
	if d.BindingReleaseHold.Duration <= 0 {
		bad("deletion.bindingReleaseHold", "must be positive: KEB's deprovisioning step of a deletion relies on the dirty label until it ran")
	}
	if d.MaxClockAhead.Duration < time.Second {
		bad("deletion.maxClockAhead", "must be at least 1s (the API server's Date header has one-second resolution)")
	}
	if d.DefaultGracePeriod.Duration < 0 || d.DefaultGracePeriod.Duration > d.MaxGracePeriod.Duration {
		bad("deletion.defaultGracePeriod", "must be between 0 and deletion.maxGracePeriod (%s)", d.MaxGracePeriod.Duration)
	}
	for _, plan := range sortedKeys(d.PlanGracePeriods) {
		if v := d.PlanGracePeriods[plan].Duration; v < 0 || v > d.MaxGracePeriod.Duration {
			bad("deletion.planGracePeriods."+plan, "must be between 0 and deletion.maxGracePeriod (%s)", d.MaxGracePeriod.Duration)
		}
	}
	if v := c.ServiceAccountKubeconfigs.CleanupTimeout.Duration; v < 0 || v > maxIdentityCleanupTimeout {
		bad("serviceAccountKubeconfigs.cleanupTimeout", "must be between 0 (the default, 5m) and %s", maxIdentityCleanupTimeout)
	}
	for i, ns := range c.ServiceAccountKubeconfigs.ClusterWideSecretsNamespaces {
		if len(ns) > 63 || !dnsLabel.MatchString(ns) {
			bad(fmt.Sprintf("serviceAccountKubeconfigs.clusterWideSecretsNamespaces[%d]", i), "%q is not a namespace name", ns)
		}
	}
	for i, ns := range c.ServiceAccountKubeconfigs.SystemNamespaces {
		if len(ns) > 63 || !dnsLabel.MatchString(ns) {
			bad(fmt.Sprintf("serviceAccountKubeconfigs.systemNamespaces[%d]", i), "%q is not a namespace name", ns)
		}
	}
	validateIdentityAllowances(c.ServiceAccountKubeconfigs, bad)
	return errors.Join(errs...)
}

// Scopes of the AuditLog pool.
const (
	PoolScopeNamespaced = "Namespaced"
	PoolScopeCluster    = "Cluster"
)

func validateRegistryCache(r RegistryCacheConfig, bad func(key, format string, args ...any)) {
	if r.SyncInterval.Duration < time.Minute {
		bad("registryCache.syncInterval", "must be at least 1m, got %s", r.SyncInterval.Duration)
	}
	if r.Workers < 1 || r.Workers > 100 {
		bad("registryCache.workers", "must be between 1 and 100, got %d", r.Workers)
	}
	if r.MaxConfigsPerRuntime < 1 || r.MaxConfigsPerRuntime > 10000 {
		bad(registrycache.KeyMaxConfigs, "must be between 1 and 10000, got %d", r.MaxConfigsPerRuntime)
	}
	if r.MaxListBytesPerRuntime < 64<<10 || r.MaxListBytesPerRuntime > 64<<20 {
		bad(registrycache.KeyMaxListBytes, "must be between 65536 (64 KiB) and 67108864 (64 MiB), got %d", r.MaxListBytesPerRuntime)
	}
	if r.ListenerPort < 0 || r.ListenerPort > 65535 {
		bad("registryCache.listenerPort", "must be 0 (no listener) or a port 1..65535, got %d", r.ListenerPort)
	}
	for _, p := range [][2]string{{"registryCache.listenerTrust.gatewayPrincipal", r.ListenerTrust.GatewayPrincipal},
		{"registryCache.listenerTrust.operatorPrincipal", r.ListenerTrust.OperatorPrincipal}} {
		if p[1] != "" && !istioPrincipal.MatchString(p[1]) {
			bad(p[0], "must be an Istio principal <trust domain>/ns/<namespace>/sa/<service account> (no spiffe://), got %q", p[1])
		}
	}
}

// istioPrincipal is how Istio names a workload identity in an AuthorizationPolicy (its SPIFFE ID without spiffe://).
var istioPrincipal = regexp.MustCompile(`^[A-Za-z0-9.-]+/ns/[a-z0-9]([-a-z0-9]*[a-z0-9])?/sa/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`)

func validateAuditLog(a AuditLogConfig, bad func(key, format string, args ...any)) {
	switch p := a.Pool; {
	case p.Scope != PoolScopeNamespaced && p.Scope != PoolScopeCluster:
		bad("shoot.auditLog.pool.scope", "must be %s or %s, got %q", PoolScopeNamespaced, PoolScopeCluster, p.Scope)
	case p.Scope == PoolScopeCluster && p.Namespace != "":
		bad("shoot.auditLog.pool.namespace", "must be empty for a cluster-scoped pool")
	case p.Namespace != "" && (len(p.Namespace) > 63 || !dnsLabel.MatchString(p.Namespace)):
		bad("shoot.auditLog.pool.namespace", "%q is not a namespace name", p.Namespace)
	case p.Enabled && (a.PolicyConfigMapName == "" || !everyTenantHasSecret(a)):
		bad("shoot.auditLog.pool.enabled", "dedicated tenants need shoot.auditLog.policyConfigMapName and shoot.auditLog.secretName, "+
			"or a secretName on every shared tenant (the credentials a runtime uses until it has its own tenant)")
	}
	if !a.Enabled {
		return
	}
	if a.PolicyConfigMapName == "" {
		bad("shoot.auditLog.policyConfigMapName", "must be set when the audit log is enabled")
	}
	if !everyTenantHasSecret(a) {
		bad("shoot.auditLog.secretName", "must be set when the audit log is enabled, unless every tenant names its own secretName")
	}
	for _, p := range sortedKeys(a.Tenants) {
		if !providers[p] {
			bad("shoot.auditLog.tenants."+p, "unknown provider")
			continue
		}
		for _, region := range sortedKeys(a.Tenants[p]) {
			t := a.Tenants[p][region]
			key := "shoot.auditLog.tenants." + p + "." + region
			if t.TenantID == "" {
				bad(key+".tenantID", "must not be empty")
			}
			if !httpsURL(t.ServiceURL) {
				bad(key+".serviceURL", "must be an https URL, got %q", t.ServiceURL)
			}
			if t.SecretName != "" && (len(t.SecretName) > 253 || !dnsSubdomain.MatchString(t.SecretName)) {
				bad(key+".secretName", "%q is not a Secret name", t.SecretName)
			}
		}
	}
}

// everyTenantHasSecret reports whether every shared tenant has a credentials Secret: its own, or the default
// shoot.auditLog.secretName. Without tenants only the default can serve (tenants may come from the overlay later).
func everyTenantHasSecret(a AuditLogConfig) bool {
	if a.SecretName != "" {
		return true
	}
	n := 0
	for _, regions := range a.Tenants {
		for _, t := range regions {
			if t.SecretName == "" {
				return false
			}
			n++
		}
	}
	return n > 0
}

func httpsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ShootConfig converts the file's shoot section into the domain configuration of shoot generation.
func (c *OperatorConfig) ShootConfig() shoot.Config {
	s := c.Shoot
	out := shoot.Config{
		Project:                  c.Gardener.Project,
		DefaultKubernetesVersion: s.DefaultKubernetesVersion,
		DefaultMachineImage:      shoot.MachineImage{Name: s.DefaultMachineImage.Name, Version: s.DefaultMachineImage.Version},
		CloudProfiles:            map[shoot.Provider]string{},
		DNS:                      shoot.DNSConfig{DomainPrefix: s.DNS.DomainPrefix, SecretName: s.DNS.SecretName, ProviderType: s.DNS.ProviderType},
		AuditLog: shoot.AuditLogConfig{
			Enabled: s.AuditLog.Enabled, PolicyConfigMapName: s.AuditLog.PolicyConfigMapName, SecretName: s.AuditLog.SecretName,
			MissingTenantIsError: s.AuditLog.MissingTenantIsError == nil || *s.AuditLog.MissingTenantIsError,
			Tenants:              map[shoot.Provider]map[string]shoot.AuditLogTenant{},
		},
		Maintenance: shoot.MaintenanceConfig{
			AutoUpdateKubernetesVersion:   s.Maintenance.AutoUpdateKubernetesVersion == nil || *s.Maintenance.AutoUpdateKubernetesVersion,
			AutoUpdateMachineImageVersion: s.Maintenance.AutoUpdateMachineImageVersion == nil || *s.Maintenance.AutoUpdateMachineImageVersion,
			Windows:                       map[string]shoot.TimeWindow{},
		},
		OpenStack: shoot.OpenStackConfig{FloatingPoolName: s.OpenStack.FloatingPoolName, LoadBalancerProvider: s.OpenStack.LoadBalancerProvider},
		Features: shoot.Features{AWSIMDSv2: s.Features.AWSIMDSv2, DisableEUAccess: s.Features.DisableEUAccess,
			DisableNetworkingFilter: s.Features.DisableNetworkingFilter},
	}
	for p, name := range s.CloudProfiles {
		out.CloudProfiles[shoot.Provider(p)] = name
	}
	for p, regions := range s.AuditLog.Tenants {
		out.AuditLog.Tenants[shoot.Provider(p)] = map[string]shoot.AuditLogTenant{}
		for r, t := range regions {
			out.AuditLog.Tenants[shoot.Provider(p)][r] = shoot.AuditLogTenant{TenantID: t.TenantID, ServiceURL: t.ServiceURL, SecretName: t.SecretName}
		}
	}
	for r, w := range s.Maintenance.Windows {
		out.Maintenance.Windows[r] = shoot.TimeWindow{Begin: w.Begin, End: w.End}
	}
	if o := s.OIDC; o != nil {
		def := domainOIDC(*o)
		out.DefaultOIDC = &def
	}
	c.landscapeConfig(&out)
	return out
}

// validateIdentityAllowances checks the landscape's allowances of ServiceAccountKubeconfigs: known powers for
// namespace names, and shared namespaces that are names and no system namespace (where they would be refused anyway).
func validateIdentityAllowances(c ServiceAccountKubeconfigsConfig, bad func(key, format string, args ...any)) {
	for _, kcp := range sortedKeys(c.AllowedPowers) {
		if len(kcp) > 63 || !dnsLabel.MatchString(kcp) {
			bad("serviceAccountKubeconfigs.allowedPowers", "%q is not a namespace name", kcp)
		}
		for i, p := range c.AllowedPowers[kcp] {
			if !slices.Contains(sakubeconfig.Powers(), sakubeconfig.RefusalCode(p)) {
				bad(fmt.Sprintf("serviceAccountKubeconfigs.allowedPowers.%s[%d]", kcp, i), "%q is no power; one of %v", p, sakubeconfig.Powers())
			}
		}
	}
	system := sakubeconfig.AccessPolicy{SystemNamespaces: c.SystemNamespaces}
	for i, ns := range c.SharedNamespaces {
		switch {
		case len(ns) > 63 || !dnsLabel.MatchString(ns):
			bad(fmt.Sprintf("serviceAccountKubeconfigs.sharedNamespaces[%d]", i), "%q is not a namespace name", ns)
		case system.System(ns):
			bad(fmt.Sprintf("serviceAccountKubeconfigs.sharedNamespaces[%d]", i), "%q is a system namespace: Secrets, tokens and workloads there are refused to every request", ns)
		}
	}
}
