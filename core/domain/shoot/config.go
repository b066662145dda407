package shoot

import "time"

// Config is the operator configuration that shoot generation needs. operator/config loads and
// validates the file and converts it into this value.
type Config struct {
	// Project is the Gardener project; shoots live in namespace "garden-<Project>".
	Project string
	// DefaultKubernetesVersion applies when a Runtime has none.
	DefaultKubernetesVersion string
	// DefaultMachineImage fills empty image name/version of worker pools.
	DefaultMachineImage MachineImage
	// CloudProfiles maps a provider to its cloud profile name; missing entries use DefaultCloudProfiles.
	CloudProfiles map[Provider]string
	DNS           DNSConfig
	AuditLog      AuditLogConfig
	Maintenance   MaintenanceConfig
	// DefaultOIDC is the default customer issuer: used when a Runtime has no additionalOidcConfig at all
	// (an explicit empty list means "no customer issuer").
	DefaultOIDC *OIDC
	// OperatorOIDC are the operator's own issuers; every cluster trusts them, whatever the Runtime says (except
	// under PreviousAuthentication).
	OperatorOIDC []OIDC
	// PreviousAuthentication keeps the previous infrastructure manager's rules for the structured authentication
	// configuration, so a landscape that keeps its configuration sees no change of that ConfigMap: one
	// authenticator, the Runtime's legacy oidcConfig when it names an issuer and a client (then not served as a
	// customer issuer), else the single operator issuer; prefixes as written ("-" is a literal dash, unset is
	// none) and always a groups mapping. Set by the mapping of the previous converter configuration.
	PreviousAuthentication bool
	// OIDCExtension decides when the shoot-oidc-service extension is enabled (OIDCExtension* values).
	OIDCExtension string
	OpenStack     OpenStackConfig
	GDCH          GDCHConfig
	Features      Features

	// EUAccessPlatformRegions get the eu-access-only restriction; nil means DefaultEUAccessPlatformRegions.
	EUAccessPlatformRegions []string
	// RegionTolerations are the seed tolerations per region; nil means DefaultRegionTolerations.
	RegionTolerations map[string][]Toleration
	// ACL configures the API server access control list (acl extension).
	ACL ACLSettings
	// DualStack lists the providers on which a Runtime may ask for dual-stack networking (the landscape enables
	// it); only providers in DualStackCapableProviders are accepted.
	DualStack []Provider
	// Workers holds defaults of worker pool settings.
	Workers WorkerDefaults
	// KubeAPIServer and Kubelet hold feature gates and API server settings every cluster gets.
	KubeAPIServer KubeAPIServerConfig
	Kubelet       KubeletConfig
	// CleanupGracePeriods are Gardener's cleanup finalize grace periods (annotations on the shoot).
	CleanupGracePeriods CleanupGracePeriods
}

// OIDCExtension values.
const (
	// OIDCExtensionCustomerIssuers enables shoot-oidc-service when the Runtime has customer issuers (the default).
	OIDCExtensionCustomerIssuers = "customer-issuers"
	// OIDCExtensionAlways enables it on every cluster.
	OIDCExtensionAlways = "always"
	// OIDCExtensionNever leaves it to the landscape.
	OIDCExtensionNever = "never"
)

// GDCHConfig holds the Google Distributed Cloud Hosted specifics of the landscape.
type GDCHConfig struct {
	// EnableEgress lets nodes reach the internet through the GDCH egress gateway.
	EnableEgress bool
	// ParentReference names the GDCH network the cluster subnets are carved from.
	ParentReference GDCHParentReference
}

// GDCHParentReference is a reference to a GDCH network; Namespace and Type may be empty (provider defaults).
type GDCHParentReference struct {
	Name      string
	Namespace string
	Type      string
}

// ACLSettings configure the API server ACL (acl extension).
type ACLSettings struct {
	// Enabled turns the feature on; while off, Runtimes' allowedCIDRs are not applied.
	Enabled bool
	// Providers where the acl extension runs; nil means DefaultACLProviders.
	Providers []Provider
	// ControlPlaneCIDRs are the operator's and KCP's egress CIDRs, always allowed next to the customer's. They are
	// read at run time (a KCP ConfigMap), not from the configuration file.
	ControlPlaneCIDRs []string
	// ControlPlaneCIDRsProblem, when set, says why ControlPlaneCIDRs could not be read; it is shown to people.
	ControlPlaneCIDRsProblem string
}

// WorkerDefaults are applied to worker pools that do not set them.
type WorkerDefaults struct {
	// MachineDrainTimeout is a Go duration ("15m"); empty: Gardener's default.
	MachineDrainTimeout string
	// MaxEvictRetries; nil: Gardener's default.
	MaxEvictRetries *int32
}

// KubeAPIServerConfig holds API server settings of every cluster.
type KubeAPIServerConfig struct {
	FeatureGates  map[string]bool
	RuntimeConfig map[string]bool
	// MaxTokenExpiration is clamped to MinTokenExpiration..MaxTokenExpiration; zero means MinTokenExpiration.
	MaxTokenExpiration time.Duration
}

// KubeletConfig holds kubelet settings of every cluster.
type KubeletConfig struct {
	FeatureGates map[string]bool
}

// CleanupGracePeriods are seconds; nil leaves Gardener's default.
type CleanupGracePeriods struct {
	ExtendedAPIs        *int64
	KubernetesResources *int64
	Webhooks            *int64
}

// MachineImage names an OS image and optionally its version.
type MachineImage struct {
	Name    string
	Version string
}

// DNSConfig says how shoots get their DNS: Mode DNSModeExternal (domain "<shoot>.<DomainPrefix>" served by one
// configured provider), DNSModeInternal (Gardener's internal domain) or DNSModeOff. An empty Mode means external
// when DomainPrefix is set, off otherwise.
type DNSConfig struct {
	Mode         string
	DomainPrefix string
	SecretName   string
	ProviderType string
}

// AuditLogConfig configures the shoot-auditlog-service extension.
type AuditLogConfig struct {
	Enabled bool
	// Tenants by provider, then region.
	Tenants map[Provider]map[string]AuditLogTenant
	// PolicyConfigMapName is referenced by kubeAPIServer.auditConfig.auditPolicy.configMapRef.
	PolicyConfigMapName string
	// SecretName is the credentials Secret in the project namespace of the tenants without their own SecretName.
	SecretName string
	// MissingTenantIsError makes generation fail when no tenant exists for provider+region.
	MissingTenantIsError bool
}

// AuditLogTenant is an audit log service endpoint.
type AuditLogTenant struct {
	TenantID   string
	ServiceURL string
	// SecretName is the tenant's own credentials Secret in the project namespace; empty: AuditLogConfig.SecretName.
	SecretName string
}

// Secret is the credentials Secret the tenant's clusters reference: its own, else the landscape's default.
func (t AuditLogTenant) Secret(cfg AuditLogConfig) string {
	if t.SecretName != "" {
		return t.SecretName
	}
	return cfg.SecretName
}

// MaintenanceConfig configures auto-updates and per-region time windows (production only).
type MaintenanceConfig struct {
	AutoUpdateKubernetesVersion   bool
	AutoUpdateMachineImageVersion bool
	Windows                       map[string]TimeWindow
}

// TimeWindow is a Gardener maintenance window, times as "HHMMSS+ZZZZ".
type TimeWindow struct {
	Begin string
	End   string
}

// OpenStackConfig holds OpenStack specifics.
type OpenStackConfig struct {
	FloatingPoolName     string
	LoadBalancerProvider string
}

// Features are switches for optional behaviour.
type Features struct {
	// AWSIMDSv2 requires IMDSv2 (http tokens, hop limit 2) on AWS worker nodes.
	AWSIMDSv2 bool
	// DisableEUAccess turns off access restrictions for EU-access platform regions.
	DisableEUAccess bool
	// DisableNetworkingFilter leaves shoot-networking-filter out of created shoots and as it is on existing ones
	// (the landscape filters otherwise; the previous manager's --network-restriction-enabled=false).
	DisableNetworkingFilter bool
}

// DefaultCloudProfiles are the cloud profile names used when Config.CloudProfiles has no entry.
var DefaultCloudProfiles = map[Provider]string{
	AWS: "aws", Azure: "az", GCP: "gcp", OpenStack: "converged-cloud-kyma", Alicloud: "alicloud", GDCH: "gdch",
}

// DNS modes.
const (
	DNSModeExternal = "external"
	DNSModeInternal = "internal"
	DNSModeOff      = "off"
)

// DefaultEUAccessPlatformRegions are the SAP BTP regions whose clusters stay in EU-access mode.
var DefaultEUAccessPlatformRegions = []string{"cf-eu11", "cf-ch20", "cf-eu01", "cf-eu02", "cf-eu31"}

// DefaultRegionTolerations are the seed tolerations per region (KSA assured workloads).
var DefaultRegionTolerations = map[string][]Toleration{"me-central2": {{Key: KSAToleration}}}

// DefaultACLProviders are the providers the acl extension runs on.
var DefaultACLProviders = []Provider{AWS, Azure}

// DualStackCapableProviders are the providers whose Gardener extension supports dual-stack networking.
var DualStackCapableProviders = []Provider{AWS, GCP}

// Service account token lifetime bounds Gardener accepts (kubeAPIServer.serviceAccountConfig.maxTokenExpiration).
const (
	MinTokenExpiration = 30 * 24 * time.Hour
	MaxTokenExpiration = 90 * 24 * time.Hour
)

// Defaults used when the corresponding Config field is empty.
const (
	DefaultFloatingPoolName     = "FloatingIP-external-kyma-01"
	DefaultLoadBalancerProvider = "f5"
)
