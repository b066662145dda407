package shoot

import "time"

// Spec is the desired state of a runtime's Gardener cluster, in domain terms. The Gardener adapter
// maps it to a core.gardener.cloud/v1beta1 Shoot.
type Spec struct {
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string

	CloudProfile       string
	CredentialsBinding string
	Region             string
	Purpose            string

	KubernetesVersion string
	// Authentication is the structured authentication the API server must use; nil: none.
	Authentication *Authentication
	// AuditPolicyConfigMap names the audit policy ConfigMap; empty: none.
	AuditPolicyConfigMap string
	// KubeAPIServer holds feature gates, runtime config and the service account token lifetime.
	KubeAPIServer KubeAPIServerSpec
	// KubeletFeatureGates are the kubelet feature gates of every pool (spec.kubernetes.kubelet.featureGates).
	KubeletFeatureGates map[string]bool

	Provider   ProviderSpec
	Workers    []WorkerSpec
	Networking NetworkingSpec

	Extensions []Extension
	Resources  []ResourceRef
	DNS        *DNS
	// AuditLogKept says, when set, that the cluster keeps the audit log it has although the configuration has no
	// tenant for its region (the previous manager's rule: a configuration mistake must not switch off a customer's
	// audit trail). It describes the spec and asks nothing of the shoot, so it is not part of the hash.
	AuditLogKept string `json:"-"`

	Maintenance        Maintenance
	AccessRestrictions []AccessRestriction
	// SeedRegion, when set, restricts scheduling to seeds of that region.
	SeedRegion         string
	Tolerations        []Toleration
	ExposureClass      string
	HAFailureTolerance string
}

// Authentication is the content of a structured authentication configuration
// (apiserver.config.k8s.io AuthenticationConfiguration) plus the ConfigMap that will hold it.
type Authentication struct {
	ConfigMapName string
	JWT           []Authenticator
}

// Authenticator is one JWT authenticator.
type Authenticator struct {
	Issuer         string
	Audiences      []string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string // empty: no groups mapping
	GroupsPrefix   string
	RequiredClaims map[string]string
	SigningAlgs    []string // informational: AuthenticationConfiguration has no field for it
	// CertificateAuthority is the PEM bundle the API server verifies the issuer's TLS certificate with.
	CertificateAuthority string
	// Previous marks an authenticator built by the previous infrastructure manager's rules
	// (Config.PreviousAuthentication): it has a groups mapping even without a groups claim, as that manager wrote it.
	Previous bool
}

// KubeAPIServerSpec holds the API server settings the operator sets on every cluster.
type KubeAPIServerSpec struct {
	FeatureGates  map[string]bool
	RuntimeConfig map[string]bool
	// MaxTokenExpiration is the service account token lifetime (extendTokenExpiration is always off).
	MaxTokenExpiration time.Duration
}

// ProviderSpec is the provider part of the cluster: type, infrastructure and control plane intent.
type ProviderSpec struct {
	Type           Provider
	Infrastructure Infrastructure
	ControlPlane   ControlPlane
	// KeepInfrastructure tells the adapter to leave the current infrastructure config untouched
	// (update without new zones, or a legacy zone-less Azure cluster).
	KeepInfrastructure bool
}

// Infrastructure holds exactly one provider's infrastructure intent.
type Infrastructure struct {
	AWS       *AWSInfrastructure
	Azure     *AzureInfrastructure
	GCP       *GCPInfrastructure
	OpenStack *OpenStackInfrastructure
	Alicloud  *AlicloudInfrastructure
	GDCH      *GDCHInfrastructure
}

// AWSInfrastructure is a VPC with three subnets per zone.
type AWSInfrastructure struct {
	VPCCIDR string
	Zones   []AWSZone
	// DualStack asks the provider for IPv6 next to IPv4.
	DualStack bool
}

// AWSZone holds the subnets of one zone.
type AWSZone struct {
	Name     string
	Workers  string
	Public   string
	Internal string
}

// AzureInfrastructure is a VNet with one subnet and NAT gateway per zone.
type AzureInfrastructure struct {
	VNetCIDR string
	Zoned    bool
	Zones    []AzureZone
}

// AzureZone is one Azure availability zone ("1".."8") with its subnet.
type AzureZone struct {
	Name                  int32
	CIDR                  string
	NATGatewayEnabled     bool
	NATIdleTimeoutMinutes int32
}

// GCPInfrastructure is the workers network.
type GCPInfrastructure struct {
	WorkersCIDR string
}

// OpenStackInfrastructure is the workers network and floating IP pool.
type OpenStackInfrastructure struct {
	FloatingPoolName string
	WorkersCIDR      string
}

// AlicloudInfrastructure is a VPC with one vswitch per zone.
type AlicloudInfrastructure struct {
	VPCCIDR string
	Zones   []AlicloudZone
}

// AlicloudZone is one zone and its workers CIDR.
type AlicloudZone struct {
	Name    string
	Workers string
}

// GDCHInfrastructure is the node network of a GDCH cluster with one subnet per zone (1 to 3).
type GDCHInfrastructure struct {
	EnableEgress    bool
	NodeCIDR        string
	Zones           []GDCHZone
	ParentReference GDCHParentReference
}

// GDCHZone is a GDCH zone with its subnet.
type GDCHZone struct {
	Name string
	CIDR string
}

// ControlPlane holds provider control plane settings; only the field of Spec.Provider.Type is used.
type ControlPlane struct {
	GCPZone                       string
	OpenStackLoadBalancerProvider string
	// AWSLoadBalancerController deploys the AWS Load Balancer Controller (dual-stack load balancers need it).
	AWSLoadBalancerController bool
}

// WorkerSpec is a worker pool after defaults and update rules.
type WorkerSpec struct {
	Worker
	// IMDSv2 requires instance metadata v2 (AWS only).
	IMDSv2 bool
}

// NetworkingSpec is the shoot networking section.
type NetworkingSpec struct {
	Type       string
	Pods       string
	Nodes      string
	Services   string
	IPFamilies []string
	// CalicoVXLAN makes calico use a VXLAN overlay (GDCH has no routing for pod networks).
	CalicoVXLAN bool
}

// Extension is one Gardener extension with its typed configuration (one of the *ExtensionConfig types or nil).
type Extension struct {
	Type     string
	Disabled bool
	Config   any
	// KeepCurrent leaves the shoot's extension of this type as it is (or absent); Disabled and Config are unused.
	// Generation states it where the landscape or the previous manager's rule says an existing cluster keeps its
	// own setting.
	KeepCurrent bool
}

// Extension types the operator owns: on update, these are replaced; all others are kept.
const (
	ExtensionNetworkingFilter = "shoot-networking-filter"
	ExtensionRegistryCache    = "registry-cache"
	ExtensionAuditLog         = "shoot-auditlog-service"
	ExtensionDNS              = "shoot-dns-service"
	ExtensionCert             = "shoot-cert-service"
	ExtensionACL              = "acl"
	ExtensionNvidiaOpenShell  = "shoot-nvidia-openshell"
	// ExtensionOIDC serves OpenIDConnect resources inside the cluster. The operator enables it when needed but
	// never removes it: the system it replaces enabled it on every cluster, and customers' resources depend on it.
	ExtensionOIDC = "shoot-oidc-service"
)

// OwnedExtensionTypes lists the extension types generation decides about.
var OwnedExtensionTypes = []string{
	ExtensionNetworkingFilter, ExtensionRegistryCache, ExtensionAuditLog, ExtensionDNS, ExtensionCert, ExtensionACL,
	ExtensionNvidiaOpenShell,
}

// NetworkingFilterConfig configures shoot-networking-filter.
type NetworkingFilterConfig struct {
	// Blackholing also blocks ingress from filtered networks.
	Blackholing bool
}

// ACLConfig allows API server access only from CIDRs.
type ACLConfig struct {
	AllowedCIDRs []string
}

// AuditLogExtensionConfig configures shoot-auditlog-service.
type AuditLogExtensionConfig struct {
	TenantID            string
	ServiceURL          string
	SecretReferenceName string
}

// RegistryCacheConfig configures registry-cache.
type RegistryCacheConfig struct {
	Caches []RegistryCache
}

// DNSServiceConfig configures shoot-dns-service.
type DNSServiceConfig struct {
	SyncProvidersFromShootSpecDNS bool
	// ProviderReplication replicates DNSProvider resources of the cluster into the control plane.
	ProviderReplication bool
	// Providers are the DNS providers of the cluster (the primary one for an external domain).
	Providers []DNSServiceProvider
}

// DNSServiceProvider is a DNS provider of shoot-dns-service.
type DNSServiceProvider struct {
	// Domains the provider may manage.
	Domains []string
	Type    string
	// Credentials names the spec.resources entry with the provider's credentials.
	Credentials string
}

// DNSCredentialsResourcePrefix prefixes the spec.resources entry of a DNS provider's credentials Secret:
// shoot-dns-service names it "shoot-dns-service-<Secret>" when it syncs providers from spec.dns.
const DNSCredentialsResourcePrefix = ExtensionDNS + "-"

// CertServiceConfig configures shoot-cert-service.
type CertServiceConfig struct {
	ShootIssuers bool
}

// ResourceRef is a shoot spec.resources entry: a named reference to an object in the project namespace.
type ResourceRef struct {
	Name       string
	APIVersion string
	Kind       string
	TargetName string
}

// DNS is the shoot domain with one primary provider.
type DNS struct {
	Domain       string
	ProviderType string
	SecretName   string
}

// Maintenance holds auto-update switches and an optional time window.
type Maintenance struct {
	AutoUpdateKubernetesVersion   bool
	AutoUpdateMachineImageVersion bool
	Window                        *TimeWindow
}

// AccessRestriction is a Gardener access restriction with options.
type AccessRestriction struct {
	Name    string
	Options map[string]string
}

// Toleration tolerates a seed taint.
type Toleration struct {
	Key   string
	Value string
}
