package shoot

// Provider is a cloud provider type as KEB names it in spec.shoot.provider.type.
type Provider string

// Providers KEB can send.
const (
	AWS       Provider = "aws"
	Azure     Provider = "azure"
	GCP       Provider = "gcp"
	OpenStack Provider = "openstack"
	Alicloud  Provider = "alicloud"
	GDCH      Provider = "gdch"
)

// Runtime is the domain input: what KEB asked for in a Runtime CR, independent of the CR's Go types.
type Runtime struct {
	ID              string // runtime ID (CR name)
	Generation      int64  // metadata.generation of the Runtime that this spec is generated from
	GlobalAccountID string
	SubaccountID    string

	Name                string // shoot name
	Purpose             string
	PlatformRegion      string
	Region              string
	CredentialsBinding  string // spec.shoot.secretBindingName (a CredentialsBinding name)
	LicenceType         string
	EnforceSeedLocation bool
	// NvidiaOpenShell enables the NVIDIA OpenShell extension (spec.shoot.enableNvidiaOpenshell).
	NvidiaOpenShell bool
	// ExperimentalAuditPolicy selects the experimental audit policy ConfigMap (the Runtime's annotation
	// operator.kyma-project.io/experimental-audit-policy).
	ExperimentalAuditPolicy bool

	KubernetesVersion string // may be major.minor only
	// OIDC are the customer issuers. OIDCGiven records that the Runtime listed them (additionalOidcConfig present,
	// possibly empty): without it the configured default customer issuer applies, with it an empty list means none.
	OIDC      []OIDC
	OIDCGiven bool
	// LegacyOIDC is the single issuer of the old kubeAPIServer.oidcConfig (KEB sends it empty); nil when unset.
	LegacyOIDC *OIDC
	// ACL holds the CIDRs allowed to reach the API server; nil or empty means no restriction.
	ACL []string

	Provider Provider
	// Workers are the pools in order: workers[0] (cpu-worker-0) first, then additionalWorkers.
	Workers    []Worker
	Networking Networking
	// HAFailureTolerance is "", "zone" or "node".
	HAFailureTolerance string

	Administrators []string
	EgressFilter   bool
	IngressFilter  bool
	RegistryCaches []RegistryCache
	// RegistryCredentialCopies are the Secrets of the Gardener project confirmed to be copies of registry
	// credentials made for this runtime (named RegistryCredentialsPrefix..., labelled with its runtime ID). A
	// registry cache may reference only these: anything else would reach another runtime's or the project's
	// credentials.
	RegistryCredentialCopies []string
	// DedicatedAuditLog is the audit log tenant the runtime claimed for itself (auditLogAccessEnabled); nil: the
	// shared tenant of its provider and region.
	DedicatedAuditLog *DedicatedAuditLog
}

// DedicatedAuditLog is an audit log tenant of one runtime.
type DedicatedAuditLog struct {
	// Name identifies the claimed tenant (for messages).
	Name       string
	TenantID   string
	ServiceURL string
	// SecretName is the tenant's write credentials Secret in the project namespace (spec.config.gardenerSecretName).
	SecretName string
}

// OIDC is one OIDC issuer the API server must trust, in the old Gardener OIDCConfig terms KEB sends.
type OIDC struct {
	IssuerURL      string
	ClientID       string
	UsernameClaim  string
	UsernamePrefix *string // nil: Kubernetes default; "-": no prefix
	GroupsClaim    string
	GroupsPrefix   *string // nil or "-": no prefix
	SigningAlgs    []string
	RequiredClaims map[string]string
	// CABundle is a PEM bundle to verify the issuer's TLS certificate; empty: system roots.
	CABundle string
	// JWKS is an inline JSON Web Key Set, for issuers the API server cannot reach. Customer issuers are served as
	// OpenIDConnect resources inside the runtime, which carry it (structured authentication cannot).
	JWKS []byte
}

// Worker is one worker pool as requested. Empty image name/version mean "use the configured default".
type Worker struct {
	Name           string
	MachineType    string
	ImageName      string
	ImageVersion   string
	Minimum        int32
	Maximum        int32
	MaxSurge       string // int or percentage ("1", "10%"); empty: Gardener default
	MaxUnavailable string
	VolumeType     string
	VolumeSize     string // e.g. "80Gi"; empty: no volume section
	Zones          []string
	Labels         map[string]string
	Annotations    map[string]string
	Taints         []Taint
	CRI            string
	MaxPods        *int32
	// ContainerRuntimes are the additional runtimes of the pool (cri.containerRuntimes), e.g. gvisor.
	ContainerRuntimes []ContainerRuntime
	// MachineDrainTimeout (Go duration) and MaxEvictRetries are the pool's machine-controller-manager settings;
	// empty or nil: the configured defaults (Config.Workers).
	MachineDrainTimeout string
	MaxEvictRetries     *int32
	// Raw is the pool as KEB sent it, in Gardener's Worker JSON shape. The operator does not interpret it: the
	// adapter passes every field the operator does not own (architecture, provider config, data volumes,
	// priority, sysctls, update strategy, autoscaler options, ...) through to the shoot.
	Raw []byte
}

// ContainerRuntime is an additional container runtime of a pool. ConfigFlags are runtime flags (gvisor's
// providerConfig.configFlags); nil when the Runtime set none.
type ContainerRuntime struct {
	Type        string
	ConfigFlags map[string]string
}

// ContainerRuntimeGVisor is gVisor's container runtime type; GVisorNetRawFlag lets sandboxed pods open raw
// sockets, which Istio needs.
const (
	ContainerRuntimeGVisor = "gvisor"
	GVisorNetRawFlag       = "net-raw"
)

// Taint is a node taint of a worker pool.
type Taint struct {
	Key    string
	Value  string
	Effect string
}

// Networking holds the cluster CIDRs; Nodes drives the whole provider infrastructure layout.
type Networking struct {
	Type      string
	Pods      string
	Nodes     string
	Services  string
	DualStack bool
}

// RegistryCache is one pull-through cache for an upstream registry.
type RegistryCache struct {
	Upstream             string
	RemoteURL            string
	VolumeSize           string
	VolumeStorageClass   string
	GarbageCollectionTTL string // Go duration, e.g. "168h"
	SecretReferenceName  string // name of a shoot resources entry holding upstream credentials
	CredentialsSecret    string // Secret in the project namespace referenced by SecretReferenceName
	HighAvailability     bool
	// HTTPProxy and HTTPSProxy are URLs of proxies the cache reaches the upstream through.
	HTTPProxy, HTTPSProxy string
	// TLS serves the cache over TLS; nil leaves the extension's default (TLS on).
	TLS *bool
}
