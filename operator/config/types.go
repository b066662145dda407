// Package config is the operator's versioned configuration file: its schema, defaults, a strict
// loader and a validator that names the offending key, so a bad file stops the manager at start-up.
package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// Identity of the configuration file format.
const (
	APIVersion = "kim.kyma-project.io/v1alpha1"
	Kind       = "OperatorConfig"
)

// OperatorConfig is the whole configuration file.
type OperatorConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Gardener   GardenerConfig `json:"gardener"`
	Shoot      ShootConfig    `json:"shoot"`
	Deletion   DeletionConfig `json:"deletion"`
	// RegistryCache configures reading the customers' RegistryCacheConfig objects from runtimes.
	RegistryCache RegistryCacheConfig `json:"registryCache,omitempty"`
	// Runtime configures what the operator keeps inside every runtime (runtime.go).
	Runtime RuntimeConfig `json:"runtime,omitempty"`
	// ServiceAccountKubeconfigs is the landscape's part of the no-escalation policy of ServiceAccountKubeconfigs and
	// how long their deletion waits for an unreachable runtime.
	ServiceAccountKubeconfigs ServiceAccountKubeconfigsConfig `json:"serviceAccountKubeconfigs,omitempty"`
}

// RegistryCacheConfig configures the registry cache sync: RegistryCacheConfig objects in runtimes that enable
// the registry-cache module become Runtime.spec.imageRegistryCache.
type RegistryCacheConfig struct {
	// Enabled turns the sync on (default true).
	Enabled *bool `json:"enabled,omitempty"`
	// SyncInterval is how often every runtime is read (default 60m); a trigger reads one at once.
	SyncInterval Duration `json:"syncInterval,omitempty"`
	// CheckUpstreamDNS refuses caches whose upstream host does not resolve (default true).
	CheckUpstreamDNS *bool `json:"checkUpstreamDNS,omitempty"`
	// Workers is the number of runtimes synced at the same time (default 5).
	Workers int `json:"workers,omitempty"`
	// MaxConfigsPerRuntime is the most RegistryCacheConfig objects read of one runtime (default 100, 1..10000).
	// A runtime with more applies none of them; the caches it has stay.
	MaxConfigsPerRuntime int `json:"maxConfigsPerRuntime,omitempty"`
	// MaxListBytesPerRuntime is the most bytes of list responses read of one runtime in one sync (default 256 KiB,
	// 64 KiB..64 MiB). It bounds the memory one runtime takes per sync worker: client-go holds a whole response
	// in memory and decodes it. A runtime with more applies none of its objects; the caches it has stay.
	MaxListBytesPerRuntime int64 `json:"maxListBytesPerRuntime,omitempty"`
	// ListenerPort is the port of the listener for the Runtime Watcher's events (POST
	// /v2/infrastructure-manager-registry-cache/event, plain HTTP behind the ingress that verifies the runtime's
	// client certificate); an event syncs its runtime at once. 0 (the default): no listener. 1..65535.
	ListenerPort int `json:"listenerPort,omitempty"`
	// ListenerTrust says whose element of X-Forwarded-Client-Cert the listener believes.
	ListenerTrust ListenerTrustConfig `json:"listenerTrust,omitempty"`
}

// ListenerTrustConfig names the Istio principals (<trust domain>/ns/<namespace>/sa/<service account>, as in an
// AuthorizationPolicy) between the Runtime Watcher and the listener (docs/registry-cache.md#trust).
type ListenerTrustConfig struct {
	// GatewayPrincipal is the ingress gateway's principal (default
	// cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account).
	GatewayPrincipal string `json:"gatewayPrincipal,omitempty"`
	// OperatorPrincipal is the operator pod's own principal, when the pod runs an Istio sidecar: then the
	// certificate is taken only from the gateway's element before the sidecar's. Empty (the default): no sidecar,
	// the last element is the gateway's.
	OperatorPrincipal string `json:"operatorPrincipal,omitempty"`
}

// ServiceAccountKubeconfigsConfig holds what the landscape allows ServiceAccountKubeconfigs beyond the built-in policy.
type ServiceAccountKubeconfigsConfig struct {
	// ClusterWideSecretsNamespaces are the KCP namespaces whose ServiceAccountKubeconfigs may reach Secrets and
	// ServiceAccount tokens, and write workloads and run commands in Pods (which reach the same), in runtime
	// namespaces other than the ServiceAccount's own, by naming them; never in a
	// system namespace, so never cluster-wide. Everyone else reaches them only in the ServiceAccount's own
	// namespace. Default: none.
	ClusterWideSecretsNamespaces []string `json:"clusterWideSecretsNamespaces,omitempty"`
	// SystemNamespaces are the runtime namespaces in which no ServiceAccountKubeconfig may reach Secrets or
	// ServiceAccount tokens, nor write workloads or run commands in Pods, not even its ServiceAccount's own. Unset: kube-system, kube-public, kyma-system.
	// kube-system is one whatever the list says.
	SystemNamespaces []string `json:"systemNamespaces,omitempty"`
	// AllowedPowers names, per KCP namespace, the cluster powers its ServiceAccountKubeconfigs may hold, refused to
	// every request by default: NodePowers (nodes/proxy, node writes), AdmissionControl (webhook configurations,
	// admission policies and bindings), CertificateSigning (approving CertificateSigningRequests, signers),
	// APIRegistration (APIServices, CustomResourceDefinition writes), PersistentVolumeCreation, NamespaceWrites
	// (update, patch, delete of namespaces). Default: none.
	AllowedPowers map[string][]string `json:"allowedPowers,omitempty"`
	// SharedNamespaces are the runtime namespaces in which ServiceAccountKubeconfigs may reach Secrets,
	// ServiceAccount tokens and workloads although the operator did not create them for the request; everywhere else
	// only a namespace the operator created for the request may hold them. Never a system namespace. Default: none.
	SharedNamespaces []string `json:"sharedNamespaces,omitempty"`
	// CleanupTimeout bounds how long the deletion of a ServiceAccountKubeconfig waits for a runtime that does not
	// answer before it lets go (and says what it left behind). Unset or 0s: 5m. At most 24h.
	CleanupTimeout Duration `json:"cleanupTimeout,omitempty"`
}

// GardenerConfig locates the Gardener project.
type GardenerConfig struct {
	// Project is the Gardener project; shoots live in namespace garden-<project>.
	Project string `json:"project"`
}

// ShootConfig drives shoot generation.
type ShootConfig struct {
	DefaultKubernetesVersion string       `json:"defaultKubernetesVersion"`
	DefaultMachineImage      MachineImage `json:"defaultMachineImage"`
	// CloudProfiles maps provider (aws, azure, gcp, openstack, alicloud, gdch) to cloud profile name.
	CloudProfiles map[string]string `json:"cloudProfiles,omitempty"`
	DNS           DNSConfig         `json:"dns,omitempty"`
	AuditLog      AuditLogConfig    `json:"auditLog,omitempty"`
	Maintenance   MaintenanceConfig `json:"maintenance,omitempty"`
	// OIDC is the default customer issuer: used for Runtimes without additionalOidcConfig (an empty list means none).
	OIDC *OIDCConfig `json:"oidc,omitempty"`
	// OperatorOIDC are the operator's own issuers, trusted by every cluster.
	OperatorOIDC []OIDCConfig `json:"operatorOIDC,omitempty"`
	// AuthenticationStyle chooses the rules of the shoots' structured authentication configuration: kim (default:
	// every operator issuer, old flag prefix semantics, CA bundles) or previous (the previous infrastructure
	// manager's: one operator issuer unless the Runtime's legacy oidcConfig names one, prefixes as written), which
	// the previous converter configuration chooses unless this document says otherwise.
	AuthenticationStyle string `json:"authenticationStyle,omitempty"`
	// OIDCExtension: when shoot-oidc-service is enabled: customer-issuers (default), always or never.
	OIDCExtension string          `json:"oidcExtension,omitempty"`
	OpenStack     OpenStackConfig `json:"openstack,omitempty"`
	GDCH          GDCHConfig      `json:"gdch,omitempty"`
	Features      Features        `json:"features,omitempty"`
	EUAccess      EUAccessConfig  `json:"euAccess,omitempty"`
	// Tolerations are seed tolerations per region, each a key or {key, value}; without the key: me-central2 ->
	// ksa-assured-workload.
	Tolerations         map[string][]Toleration   `json:"tolerations,omitempty"`
	ACL                 ACLConfig                 `json:"acl,omitempty"`
	DualStack           DualStackConfig           `json:"dualStack,omitempty"`
	Workers             WorkersConfig             `json:"workers,omitempty"`
	KubeAPIServer       KubeAPIServerConfig       `json:"kubeAPIServer,omitempty"`
	Kubelet             KubeletConfig             `json:"kubelet,omitempty"`
	CleanupGracePeriods CleanupGracePeriodsConfig `json:"cleanupGracePeriods,omitempty"`
}

// GDCHConfig holds the GDCH specifics of the landscape.
type GDCHConfig struct {
	EnableEgress    bool                `json:"enableEgress,omitempty"`
	ParentReference GDCHParentReference `json:"parentReference,omitempty"`
}

// GDCHParentReference names the GDCH network cluster subnets are carved from.
type GDCHParentReference struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Type      string `json:"type,omitempty"`
}

// EUAccessConfig lists the platform regions whose clusters get the eu-access-only restriction.
type EUAccessConfig struct {
	// PlatformRegions; absent: cf-eu11, cf-ch20, cf-eu01, cf-eu02, cf-eu31; [] turns the restriction off.
	PlatformRegions *[]string `json:"platformRegions,omitempty"`
}

// ACLConfig configures the API server ACL (acl extension).
type ACLConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// Providers where the extension runs; default aws and azure.
	Providers []string `json:"providers,omitempty"`
	// ConfigMap in KCP with the operator's and KCP's egress CIDRs; required when enabled.
	ConfigMap *ObjectRef `json:"configMap,omitempty"`
}

// ObjectRef names a namespaced object; an empty namespace means the operator's (first watched) namespace.
type ObjectRef struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// DualStackConfig lists the providers on which dual-stack networking is offered (aws and gcp can).
type DualStackConfig struct {
	Providers []string `json:"providers,omitempty"`
}

// WorkersConfig holds defaults for worker pools that do not set them.
type WorkersConfig struct {
	MachineDrainTimeout *Duration `json:"machineDrainTimeout,omitempty"`
	MaxEvictRetries     *int32    `json:"maxEvictRetries,omitempty"`
}

// KubeAPIServerConfig holds API server settings of every cluster.
type KubeAPIServerConfig struct {
	FeatureGates  map[string]bool `json:"featureGates,omitempty"`
	RuntimeConfig map[string]bool `json:"runtimeConfig,omitempty"`
	// MaxTokenExpiration of service account tokens, 720h..2160h (default 720h).
	MaxTokenExpiration *Duration `json:"maxTokenExpiration,omitempty"`
}

// KubeletConfig holds kubelet settings of every cluster.
type KubeletConfig struct {
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// CleanupGracePeriodsConfig are Gardener's cleanup finalize grace periods in seconds.
type CleanupGracePeriodsConfig struct {
	ExtendedAPIs        *int64 `json:"extendedAPIs,omitempty"`
	KubernetesResources *int64 `json:"kubernetesResources,omitempty"`
	Webhooks            *int64 `json:"webhooks,omitempty"`
}

// MachineImage is an OS image; an empty version lets Gardener pick the newest of the cloud profile.
type MachineImage struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// DNSConfig says how shoots get their DNS. Mode external (the default when domainPrefix is set) gives every shoot
// the domain <shoot>.<domainPrefix> served by one provider; internal uses Gardener's internal domain; off none.
type DNSConfig struct {
	Mode         string `json:"mode,omitempty"`
	DomainPrefix string `json:"domainPrefix,omitempty"`
	SecretName   string `json:"secretName,omitempty"`
	ProviderType string `json:"providerType,omitempty"`
}

// AuditLogConfig configures the shoot-auditlog-service extension.
type AuditLogConfig struct {
	Enabled             bool   `json:"enabled,omitempty"`
	PolicyConfigMapName string `json:"policyConfigMapName,omitempty"`
	// SecretName is the credentials Secret in the project namespace of the tenants that name none of their own.
	SecretName string `json:"secretName,omitempty"`
	// MissingTenantIsError fails generation for a provider/region without tenant (default true).
	MissingTenantIsError *bool `json:"missingTenantIsError,omitempty"`
	// Tenants by provider, then region.
	Tenants map[string]map[string]AuditLogTenant `json:"tenants,omitempty"`
	// Pool is the pool of dedicated tenants for Runtimes with auditLogAccessEnabled.
	Pool AuditLogPoolConfig `json:"pool,omitempty"`
}

// AuditLogPoolConfig locates the landscape's AuditLog resources (auditlogmanager.kyma-project.io/v1beta1).
type AuditLogPoolConfig struct {
	// Enabled turns dedicated tenants on; without it auditLogAccessEnabled has no effect (default false).
	Enabled bool `json:"enabled,omitempty"`
	// Scope of the AuditLog resources: Namespaced (default) or Cluster.
	Scope string `json:"scope,omitempty"`
	// Namespace of namespaced AuditLog resources; empty: the operator's (first watched) namespace.
	Namespace string `json:"namespace,omitempty"`
}

// AuditLogTenant is an audit log service endpoint.
type AuditLogTenant struct {
	TenantID   string `json:"tenantID"`
	ServiceURL string `json:"serviceURL"`
	// SecretName is this tenant's credentials Secret in the project namespace; empty: shoot.auditLog.secretName.
	// Each tenant authenticates with its own credentials, so a region's shoots must never be given another's.
	SecretName string `json:"secretName,omitempty"`
}

// MaintenanceConfig controls auto-updates and production maintenance windows.
type MaintenanceConfig struct {
	AutoUpdateKubernetesVersion   *bool `json:"autoUpdateKubernetesVersion,omitempty"`
	AutoUpdateMachineImageVersion *bool `json:"autoUpdateMachineImageVersion,omitempty"`
	// Windows by region, times "HHMMSS+ZZZZ".
	Windows map[string]TimeWindow `json:"windows,omitempty"`
}

// TimeWindow is a maintenance window.
type TimeWindow struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// OIDCConfig is an issuer in Gardener's old OIDC field names.
type OIDCConfig struct {
	IssuerURL      string   `json:"issuerURL"`
	ClientID       string   `json:"clientID"`
	UsernameClaim  string   `json:"usernameClaim,omitempty"`
	UsernamePrefix *string  `json:"usernamePrefix,omitempty"`
	GroupsClaim    string   `json:"groupsClaim,omitempty"`
	GroupsPrefix   *string  `json:"groupsPrefix,omitempty"`
	SigningAlgs    []string `json:"signingAlgs,omitempty"`
	// CABundle verifies the issuer's TLS certificate (PEM); empty: system roots.
	CABundle string `json:"caBundle,omitempty"`
}

// OpenStackConfig holds OpenStack infrastructure settings.
type OpenStackConfig struct {
	FloatingPoolName     string `json:"floatingPoolName,omitempty"`
	LoadBalancerProvider string `json:"loadBalancerProvider,omitempty"`
}

// Features are switches for optional behaviour.
type Features struct {
	AWSIMDSv2       bool `json:"awsIMDSv2,omitempty"`
	DisableEUAccess bool `json:"disableEUAccess,omitempty"`
	// DisableNetworkingFilter leaves shoot-networking-filter out of new shoots and as it is on existing ones, for
	// landscapes that filter otherwise (the previous manager's --network-restriction-enabled=false).
	DisableNetworkingFilter bool `json:"disableNetworkingFilter,omitempty"`
}

// DeletionConfig controls the grace window between deleting a Runtime and deleting its shoot.
type DeletionConfig struct {
	// DefaultGracePeriod is the window of plans without an override; "0s" deletes at once (unset: 72h).
	DefaultGracePeriod Duration `json:"defaultGracePeriod,omitempty"`
	// PlanGracePeriods overrides the default per KEB plan name.
	PlanGracePeriods map[string]Duration `json:"planGracePeriods,omitempty"`
	// MaxGracePeriod caps every window (data privacy); it must be positive (unset: 30 days).
	MaxGracePeriod Duration `json:"maxGracePeriod,omitempty"`
	// Freeze stops all shoot deletions (incident switch). The ConfigMap kim-deletion-guard (key frozen) is the
	// same switch without a restart.
	Freeze bool `json:"freeze,omitempty"`
	// ForceDeletionAfter is how long a deletion may be stuck with an error code Gardener accepts force-deletion
	// for before the operator sets confirmation.gardener.cloud/force-deletion; "0s" disables force-deletion (unset:
	// 6h).
	ForceDeletionAfter Duration `json:"forceDeletionAfter,omitempty"`
	// Budget is the deletion circuit breaker: at most limit shoot deletions per period.
	Budget DeletionBudget `json:"budget,omitempty"`
	// MaxClockAhead is how far the operator's clock may run ahead of the garden API server's before deletions
	// stop (unset: 2m).
	MaxClockAhead Duration `json:"maxClockAhead,omitempty"`
	// BindingReleaseHold is how long the dirty label the operator puts on a deleted runtime's credentials binding
	// stays when another shoot of the global account still names the binding; then it comes off, so KEB gives the
	// account's next runtime that binding again (docs/adr/0005). Keep it above KEB's one-hour wait (unset: 2h).
	BindingReleaseHold Duration `json:"bindingReleaseHold,omitempty"`
}

// DeletionBudget is the deletion circuit breaker's limit.
type DeletionBudget struct {
	// Limit is the number of shoot deletions allowed per period (unset: 100; 0 is rejected: use the brake).
	Limit *int `json:"limit,omitempty"`
	// Period is the breaker's period (unset: 1h).
	Period Duration `json:"period,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("24h", "90m").
type Duration struct {
	time.Duration
	// set is true when the value came from the file, so "0s" and "unset" can mean different things.
	set bool
}

// Set returns a Duration of d that counts as configured.
func Set(d time.Duration) Duration { return Duration{Duration: d, set: true} }

// IsSet reports whether the value was configured (also when it is zero).
func (d Duration) IsSet() bool { return d.set }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"24h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	d.Duration, d.set = v, true
	return nil
}

// MarshalJSON writes a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
