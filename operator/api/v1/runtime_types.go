package v1

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeState is the coarse state of a Runtime. KEB reads only this field.
type RuntimeState string

const (
	// RuntimeStatePending means the operator is working towards the desired state (creating, updating, waiting for Gardener).
	RuntimeStatePending RuntimeState = "Pending"
	// RuntimeStateReady means the shoot is reconciled, the kubeconfig Secret exists and the runtime is configured.
	RuntimeStateReady RuntimeState = "Ready"
	// RuntimeStateFailed means a problem the operator cannot resolve by retrying; the conditions say what to fix.
	RuntimeStateFailed RuntimeState = "Failed"
	// RuntimeStateTerminating means the Runtime is being deleted.
	RuntimeStateTerminating RuntimeState = "Terminating"
)

// Runtime describes a Kyma runtime: the Gardener cluster KEB ordered and the access configured inside it.
// KEB creates it in kcp-system named by the lowercase runtime ID; the operator creates and keeps the shoot,
// the GardenerCluster and the kubeconfig Secret, and reports progress in status.state.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rt,categories=kim
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Shoot",type=string,JSONPath=`.spec.shoot.name`
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.shoot.provider.type`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.shoot.region`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="Message of the Ready condition"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name: the runtime ID has at most 63 characters (it is the value of the runtime-id label of every object of the runtime)"
type Runtime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired runtime, as KEB sends it.
	Spec RuntimeSpec `json:"spec,omitempty"`
	// Status is what the operator observed and did. It reads as observedGeneration 0 before the operator wrote it
	// (a default on read), so kstatus sees a Runtime nobody has looked at yet as in progress, not current.
	// +kubebuilder:default={observedGeneration: 0}
	Status RuntimeStatus `json:"status,omitempty"`
}

// RuntimeList is a list of Runtimes.
//
// +kubebuilder:object:root=true
type RuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Runtime `json:"items"`
}

// RuntimeSpec is the desired state of a Kyma runtime.
type RuntimeSpec struct {
	// Shoot describes the Gardener cluster.
	Shoot RuntimeShoot `json:"shoot"`
	// Security lists the administrators and the network filter of the runtime.
	Security Security `json:"security"`
	// AuditLogAccessEnabled gives the cluster an audit log tenant of its own (claimed from the landscape's pool)
	// and copies the tenant's read credentials into the runtime (kyma-system/auditlog-read-credentials), so the
	// customer can read the cluster's audit logs. Switching it on is one-way: setting it to false later keeps the
	// dedicated tenant until the runtime is deleted.
	// +optional
	AuditLogAccessEnabled *bool `json:"auditLogAccessEnabled,omitempty"`
	// ImageRegistryCache configures pull-through caches for container registries (Gardener's registry-cache
	// extension). Removing all entries disables the caches. The operator writes it (field manager
	// kim-registry-cache) from the customer's RegistryCacheConfig objects in the runtime; secretReferenceName then
	// names the operator's copy of the credentials in the Gardener project (reg-cache-<hash>). At most 100 entries,
	// the most registryCache.maxConfigsPerRuntime allows.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	ImageRegistryCache []ImageRegistryCache `json:"imageRegistryCache,omitempty"`
}

// RuntimeShoot describes the Gardener cluster of a runtime.
//
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlane) || !has(self.controlPlane.highAvailability) || self.controlPlane.highAvailability.failureTolerance.type in ['zone', 'node']",message="controlPlane.highAvailability.failureTolerance.type must be 'zone' or 'node'",fieldPath=".controlPlane"
type RuntimeShoot struct {
	// Name of the Gardener shoot: a DNS label without '--'. Gardener also limits the length of project name plus shoot
	// name to 21 characters; the operator checks that against the configured project. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('--')",message="shoot name must not contain '--'"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="shoot name is immutable; create a new Runtime for a new cluster"
	Name string `json:"name"`
	// Purpose of the cluster as Gardener understands it.
	// +kubebuilder:validation:Enum=evaluation;testing;development;production
	Purpose string `json:"purpose"`
	// PlatformRegion is the SAP BTP region of the subaccount, e.g. cf-eu10. cf-eu11 and cf-ch20 restrict the cluster to the EU.
	// +optional
	PlatformRegion string `json:"platformRegion,omitempty"`
	// Region of the cloud provider, e.g. eu-central-1. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="region is immutable"
	Region string `json:"region"`
	// LicenceType is recorded on the shoot, e.g. TRIAL or PARTNER.
	// +optional
	LicenceType *string `json:"licenceType,omitempty"`
	// SecretBindingName holds the name of the Gardener CredentialsBinding with the cloud provider credentials
	// (the field keeps its historical name for KEB).
	// +kubebuilder:validation:MinLength=1
	SecretBindingName string `json:"secretBindingName"`
	// EnforceSeedLocation places the control plane on a seed in the same region as the cluster.
	// +optional
	EnforceSeedLocation *bool `json:"enforceSeedLocation,omitempty"`
	// EnableNvidiaOpenshell enables the NVIDIA OpenShell integration on the cluster.
	// +optional
	EnableNvidiaOpenshell *bool `json:"enableNvidiaOpenshell,omitempty"`
	// Kubernetes holds the Kubernetes version and API server settings.
	// +optional
	Kubernetes Kubernetes `json:"kubernetes,omitempty"`
	// Provider holds the cloud provider type and the worker pools.
	Provider Provider `json:"provider"`
	// Networking holds the network type and CIDRs of the cluster.
	Networking Networking `json:"networking"`
	// ControlPlane configures control plane high availability (failure tolerance zone or node).
	// +optional
	ControlPlane *gardencorev1beta1.ControlPlane `json:"controlPlane,omitempty"`
}

// Kubernetes holds the Kubernetes version and API server settings.
type Kubernetes struct {
	// Version is major.minor (the newest patch of the cloud profile is used) or major.minor.patch. Without it the
	// operator's default is used, also when it is empty (KEB sends "" when its own default is not configured). The
	// operator never downgrades a running cluster.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]+\.[0-9]+(\.[0-9]+)?)?$`
	Version *string `json:"version,omitempty"`
	// KubeAPIServer configures authentication and access of the API server.
	// +optional
	KubeAPIServer APIServer `json:"kubeAPIServer,omitempty"`
}

// APIServer configures authentication and network access of the cluster's API server.
type APIServer struct {
	// OidcConfig is the legacy single OIDC configuration; KEB sends an empty object. Use AdditionalOidcConfig.
	// +optional
	OidcConfig OIDCConfig `json:"oidcConfig,omitempty"`
	// AdditionalOidcConfig lists the OIDC issuers whose tokens the API server accepts. Without entries the
	// operator's default issuer is used. The bound (far above real input) keeps the issuer rule within the API
	// server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	AdditionalOidcConfig *[]OIDCConfig `json:"additionalOidcConfig,omitempty"`
	// ACL restricts which client networks may reach the API server.
	// +optional
	ACL *ACL `json:"acl,omitempty"`
}

// OIDCConfig configures one OpenID Connect issuer whose tokens the API server accepts. The field names are those of
// Gardener's former shoot OIDC configuration, plus the issuer's JSON Web Key Set.
type OIDCConfig struct {
	// CABundle is a PEM bundle to verify the issuer's TLS certificate; the system roots are used without it.
	// +optional
	CABundle *string `json:"caBundle,omitempty"`
	// ClientAuthentication is kept for compatibility; it is not used for token validation.
	// +optional
	ClientAuthentication *OpenIDConnectClientAuthentication `json:"clientAuthentication,omitempty"`
	// ClientID is the audience the tokens must be issued for.
	// +optional
	ClientID *string `json:"clientID,omitempty"`
	// GroupsClaim is the JWT claim holding the user's groups.
	// +optional
	GroupsClaim *string `json:"groupsClaim,omitempty"`
	// GroupsPrefix is prepended to group names; '-' means no prefix.
	// +optional
	GroupsPrefix *string `json:"groupsPrefix,omitempty"`
	// IssuerURL is the https URL of the issuer; it must match the token's iss claim.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://')",message="issuerURL must be an https:// URL"
	IssuerURL *string `json:"issuerURL,omitempty"`
	// RequiredClaims are claims that must be present in the token with these values.
	// +optional
	RequiredClaims map[string]string `json:"requiredClaims,omitempty"`
	// SigningAlgs lists the accepted signing algorithms, e.g. RS256.
	// +optional
	// +listType=atomic
	SigningAlgs []string `json:"signingAlgs,omitempty"`
	// UsernameClaim is the JWT claim used as the user name.
	// +optional
	UsernameClaim *string `json:"usernameClaim,omitempty"`
	// UsernamePrefix is prepended to user names; '-' means no prefix.
	// +optional
	UsernamePrefix *string `json:"usernamePrefix,omitempty"`
	// JWKS is the issuer's JSON Web Key Set, for issuers the API server cannot reach.
	// +optional
	JWKS []byte `json:"jwks,omitempty"`
}

// OpenIDConnectClientAuthentication holds client credentials of an OIDC client (kept for compatibility).
type OpenIDConnectClientAuthentication struct {
	// ExtraConfig are additional settings of the client.
	// +optional
	ExtraConfig map[string]string `json:"extraConfig,omitempty"`
	// Secret is the client secret.
	// +optional
	Secret *string `json:"secret,omitempty"`
}

// ACL restricts the client networks that may reach the API server.
type ACL struct {
	// AllowedCIDRs are the client networks allowed to reach the API server, e.g. 203.0.113.0/24. The bound (far
	// above real input) keeps the CIDR rule within the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="each allowedCIDRs entry must be a CIDR such as 203.0.113.0/24"
	// +kubebuilder:validation:items:MaxLength=43
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`
}

// Provider holds the cloud provider type and the worker pools of the cluster.
//
// An additional pool named like the pool in workers is judged by the controller (reason DuplicateWorker): the rule
// comparing the names is beyond the API server's CEL cost budget at 100 pools of unbounded names.
type Provider struct {
	// Type of the cloud provider. Immutable.
	// +kubebuilder:validation:Enum=aws;azure;gcp;openstack;alicloud;gdch
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="provider type is immutable"
	Type string `json:"type"`
	// Workers holds exactly one pool, named cpu-worker-0 by KEB, in Gardener's Worker shape. An empty machine image
	// name or version means the operator's default. A pool without zones gets the first zones the cloud profile
	// offers in the region (as many as its maxSurge, at least one); an existing pool keeps the zones it has.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(w, w.minimum <= w.maximum)",message="each worker pool needs minimum <= maximum"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !(has(w.maxSurge) && has(w.maxUnavailable) && (w.maxSurge == 0 || w.maxSurge == '0%') && (w.maxUnavailable == 0 || w.maxUnavailable == '0%')))",message="maxSurge and maxUnavailable of a worker pool must not both be zero"
	Workers []gardencorev1beta1.Worker `json:"workers"`
	// AdditionalWorkers are further pools in Gardener's Worker shape; removing one removes the pool. Pool names must
	// be unique across workers and additionalWorkers. At most 100 pools, far above what KEB sends: the bound keeps
	// the admission rules within the API server's CEL cost budget (Gardener's Worker fields have no length limits of
	// their own). A pool without zones gets zones as a pool of Workers does.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:XValidation:rule="self.all(w, w.minimum <= w.maximum)",message="each additional worker pool needs minimum <= maximum"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !(has(w.maxSurge) && has(w.maxUnavailable) && (w.maxSurge == 0 || w.maxSurge == '0%') && (w.maxUnavailable == 0 || w.maxUnavailable == '0%')))",message="maxSurge and maxUnavailable of an additional worker pool must not both be zero"
	AdditionalWorkers *[]gardencorev1beta1.Worker `json:"additionalWorkers,omitempty"`
}

// Networking holds the network type and CIDRs of the cluster. The CIDRs are immutable.
type Networking struct {
	// Type of the network plugin.
	// +optional
	// +kubebuilder:validation:Enum=calico;cilium
	Type *string `json:"type,omitempty"`
	// Pods is the CIDR of the pod network. Immutable.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="pods must be a CIDR such as 100.64.0.0/12"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="pods CIDR is immutable"
	Pods string `json:"pods"`
	// Nodes is the CIDR of the node network; the provider subnets are carved from it. Immutable.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="nodes must be a CIDR such as 10.250.0.0/16"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodes CIDR is immutable"
	Nodes string `json:"nodes"`
	// Services is the CIDR of the service network. Immutable.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="services must be a CIDR such as 100.104.0.0/13"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="services CIDR is immutable"
	Services string `json:"services"`
	// DualStack enables IPv4 and IPv6 networking.
	// +optional
	DualStack *bool `json:"dualStack,omitempty"`
	// VPCNetwork names an existing provider network to place the cluster in.
	// +optional
	VPCNetwork *string `json:"vpcNetwork,omitempty"`
}

// Security holds the administrators of the runtime and its network filter.
type Security struct {
	// Administrators are user IDs (often e-mail addresses) bound to cluster-admin in the runtime. KEB sends any
	// strings; admission takes them all, and the operator binds none that is empty or starts with system: (reserved
	// by Kubernetes: system:anonymous, system:unauthenticated, ...): condition Configured reason
	// AdministratorNamesReserved names them, the rest is configured. At most 1,000: each becomes a binding in the
	// runtime.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Administrators []string `json:"administrators"`
	// Networking configures Gardener's networking filter extension.
	Networking NetworkingSecurity `json:"networking"`
}

// NetworkingSecurity configures network filtering of the cluster.
type NetworkingSecurity struct {
	// Filter configures egress and ingress filtering.
	Filter Filter `json:"filter"`
}

// Filter configures the shoot-networking-filter extension.
type Filter struct {
	// Ingress enables ingress filtering (blackholing of blocked sources).
	// +optional
	Ingress *Ingress `json:"ingress,omitempty"`
	// Egress enables egress filtering of known malicious destinations.
	Egress Egress `json:"egress"`
}

// Ingress configures ingress filtering.
type Ingress struct {
	// Enabled turns ingress filtering on.
	Enabled bool `json:"enabled"`
}

// Egress configures egress filtering.
type Egress struct {
	// Enabled turns egress filtering on.
	Enabled bool `json:"enabled"`
}

// ImageRegistryCache configures a pull-through cache for one upstream container registry.
type ImageRegistryCache struct {
	// Name of the cache configuration as KEB knows it.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the cache configuration as KEB knows it.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// UID of the cache configuration as KEB knows it.
	// +optional
	UID string `json:"uid,omitempty"`
	// Config is the cache itself, in the registry-cache extension's shape.
	Config RegistryCacheConfig `json:"config"`
}

// RegistryCacheConfig is one cache of Gardener's registry-cache extension.
type RegistryCacheConfig struct {
	// Upstream is the registry host (and optional port) to cache, e.g. docker.io.
	// +kubebuilder:validation:MinLength=1
	Upstream string `json:"upstream"`
	// RemoteURL is the URL of the upstream registry when it differs from https://<upstream>.
	// +optional
	RemoteURL *string `json:"remoteURL,omitempty"`
	// Volume configures the cache's persistent volume.
	// +optional
	Volume *RegistryCacheVolume `json:"volume,omitempty"`
	// GarbageCollection configures how long cached images are kept.
	// +optional
	GarbageCollection *RegistryCacheGarbageCollection `json:"garbageCollection,omitempty"`
	// SecretReferenceName names the resource reference holding upstream credentials.
	// +optional
	SecretReferenceName *string `json:"secretReferenceName,omitempty"`
	// Proxy configures an HTTP(S) proxy for reaching the upstream.
	// +optional
	Proxy *RegistryCacheProxy `json:"proxy,omitempty"`
	// HTTP configures the cache's HTTP endpoint.
	// +optional
	HTTP *RegistryCacheHTTP `json:"http,omitempty"`
}

// RegistryCacheVolume configures a cache's persistent volume.
type RegistryCacheVolume struct {
	// Size of the volume, e.g. 10Gi.
	// +optional
	Size *string `json:"size,omitempty"`
	// StorageClassName of the volume.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// RegistryCacheGarbageCollection configures garbage collection of a cache.
type RegistryCacheGarbageCollection struct {
	// TTL of cached images, e.g. 168h; 0s disables garbage collection.
	TTL string `json:"ttl"`
}

// RegistryCacheProxy configures a proxy for a cache.
type RegistryCacheProxy struct {
	// HTTPProxy is the proxy for http requests.
	// +optional
	HTTPProxy *string `json:"httpProxy,omitempty"`
	// HTTPSProxy is the proxy for https requests.
	// +optional
	HTTPSProxy *string `json:"httpsProxy,omitempty"`
}

// RegistryCacheHTTP configures a cache's HTTP endpoint.
type RegistryCacheHTTP struct {
	// TLS serves the cache over TLS; without it the extension's default applies (TLS on). Optional, as under the
	// previous manager, so Runtimes it stored with an empty http object stay writable.
	// +optional
	TLS *bool `json:"tls,omitempty"`
}

// RuntimeStatus is what the operator observed and did for a Runtime.
type RuntimeStatus struct {
	// State is the coarse state KEB follows.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Ready;Failed;Terminating
	State RuntimeState `json:"state,omitempty"`
	// Conditions explain the state; the Ready condition summarises it with a stable reason.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ProvisioningCompleted is true once the cluster was Ready for the first time.
	// +optional
	ProvisioningCompleted bool `json:"provisioningCompleted,omitempty"`
	// ShootLastOperation mirrors the shoot's last Gardener operation.
	// +optional
	ShootLastOperation *gardencorev1beta1.LastOperation `json:"shootLastOperation,omitempty"`
	// ShootLastErrors mirrors the shoot's last Gardener errors.
	// +optional
	// +listType=atomic
	ShootLastErrors []gardencorev1beta1.LastError `json:"shootLastErrors,omitempty"`
	// AuditLogCR names the AuditLog resource (the dedicated audit log tenant) claimed for the runtime:
	// <namespace>/<name> for a namespaced pool, <name> for a cluster-scoped one.
	// +optional
	AuditLogCR string `json:"auditLogCR,omitempty"`
	// RuntimeConfiguration records what the operator last wrote inside the runtime (kyma-system, the
	// kyma-provisioning-info ConfigMap, OpenIDConnect resources, administrators' bindings).
	// +optional
	RuntimeConfiguration *RuntimeConfigurationStatus `json:"runtimeConfiguration,omitempty"`
	// ShootInSync identifies the last comparison that found the shoot holding everything the operator applies: a
	// digest of what it depended on (the apply, the shoot's UID, generation, labels and annotations, the
	// authentication ConfigMap's version). A starting operator that finds the same inputs takes the answer from
	// here instead of comparing the shoot again; any change of them makes it compare. Opaque.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ShootInSync string `json:"shootInSync,omitempty"`
}

// RuntimeConfigurationStatus is the configuration the operator last reached inside the runtime. It is written
// again when the desired state changes (another hash) or the drift period since AppliedAt has passed. The bootstrap
// fields record the last attempt of the bootstrap manifests, also one that did not reach them.
type RuntimeConfigurationStatus struct {
	// Hash identifies the desired state that was reached.
	// +optional
	Hash string `json:"hash,omitempty"`
	// AppliedAt is when it was last written or confirmed.
	// +optional
	AppliedAt *metav1.Time `json:"appliedAt,omitempty"`
	// ShootReconciledAt is the shoot's last successful Gardener operation the state was computed with (the
	// lastReconcileTime of the provisioning info).
	// +optional
	ShootReconciledAt *metav1.Time `json:"shootReconciledAt,omitempty"`
	// BootstrapHash identifies the landscape's bootstrap manifests (their content hash) last attempted inside the
	// runtime; a changed set is rolled out in waves from what every Runtime records here.
	// +optional
	BootstrapHash string `json:"bootstrapHash,omitempty"`
	// BootstrapFailed is true when that attempt did not reach the set (refused, invalid, or applying it failed).
	// +optional
	BootstrapFailed bool `json:"bootstrapFailed,omitempty"`
}
