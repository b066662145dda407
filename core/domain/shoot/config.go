package shoot

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
	// DefaultOIDC is the issuer used when a Runtime has no additional OIDC configuration.
	DefaultOIDC *OIDC
	OpenStack   OpenStackConfig
	Features    Features
}

// MachineImage names an OS image and optionally its version.
type MachineImage struct {
	Name    string
	Version string
}

// DNSConfig enables shoot DNS (domain "<shoot>.<DomainPrefix>") when DomainPrefix is set.
type DNSConfig struct {
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
	// SecretName is the credentials Secret in the project namespace for the audit log service.
	SecretName string
	// MissingTenantIsError makes generation fail when no tenant exists for provider+region.
	MissingTenantIsError bool
}

// AuditLogTenant is an audit log service endpoint.
type AuditLogTenant struct {
	TenantID   string
	ServiceURL string
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
}

// DefaultCloudProfiles are the cloud profile names used when Config.CloudProfiles has no entry.
var DefaultCloudProfiles = map[Provider]string{
	AWS: "aws", Azure: "az", GCP: "gcp", OpenStack: "converged-cloud-kyma", Alicloud: "alicloud", GDCH: "gdch",
}

// Defaults used when the corresponding Config field is empty.
const (
	DefaultFloatingPoolName     = "FloatingIP-external-kyma-01"
	DefaultLoadBalancerProvider = "f5"
)
