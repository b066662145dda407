package shoot

import "fmt"

// Current is the domain view of an existing shoot, as far as update generation needs it.
type Current struct {
	KubernetesVersion string
	Workers           []CurrentWorker
	// HasInfrastructureConfig is false when the shoot has no provider infrastructure config.
	HasInfrastructureConfig bool
	// InfrastructureZones are the zones of the infrastructure config in their order. CIDRs are the
	// zone's subnets: aws [workers, public, internal]; azure [cidr]; alicloud [workers].
	InfrastructureZones []CurrentZone
	// InfrastructureConfig is the provider infrastructure config as Gardener stores it (JSON); it is reported
	// verbatim inside the runtime (the provisioning info), never read for generation.
	InfrastructureConfig []byte
	// SecretBindingName is set on shoots that still reference a SecretBinding (created before
	// CredentialsBindings); see CredentialsBindingMigration.
	SecretBindingName string
	// DualStack is true when the shoot has IPv4 and IPv6.
	DualStack bool
	// AuthenticationConfigMap is the structured-authentication ConfigMap the shoot references; empty: none.
	AuthenticationConfigMap string
	// ExtensionTypes are the extensions the shoot has enabled.
	ExtensionTypes []string
	// DNSExtensionWithoutProviders is true when the shoot's shoot-dns-service extension has a configuration that
	// names no DNS provider (clusters created before custom domains).
	DNSExtensionWithoutProviders bool
	// AuditLog is the shoot's enabled auditlog extension with what it references; nil: none, or one that does not
	// name a tenant, a service URL and its credentials Secret.
	AuditLog *CurrentAuditLog
	// RegistryCacheCredentials are the credentials the shoot's registry caches reference, by upstream.
	RegistryCacheCredentials []CurrentRegistryCredentials
}

// CurrentRegistryCredentials is what a registry cache of an existing shoot references: ResourceName is the
// spec.resources entry (the cache's secretReferenceName), SecretName the project Secret it names.
type CurrentRegistryCredentials struct {
	Upstream, ResourceName, SecretName string
}

// CurrentAuditLog is the audit log an existing shoot is configured with.
type CurrentAuditLog struct {
	TenantID, ServiceURL string
	// SecretName is the garden Secret of the extension's credentials resource, ResourceName that resource's name
	// in spec.resources (the extension's secretReferenceName).
	SecretName, ResourceName string
	// PolicyConfigMap is the shoot's audit policy ConfigMap; empty: none.
	PolicyConfigMap string
}

// CurrentWorker is an existing worker pool.
type CurrentWorker struct {
	Name         string
	ImageName    string
	ImageVersion string
	Zones        []string
	// MachineDrainTimeout and MaxEvictRetries as the pool has them; they win over configured defaults.
	MachineDrainTimeout string
	MaxEvictRetries     *int32
}

// CurrentZone is a zone of the existing infrastructure config.
type CurrentZone struct {
	Name  string
	CIDRs []string
}

// input is what every step reads.
type input struct {
	rt      Runtime
	cfg     Config
	current *Current // nil on create
}

// step is one named concern of generation.
type step struct {
	name  string
	apply func(in input, s *Spec) error
}

// steps are applied in order; later steps may read what earlier ones wrote (the provider
// infrastructure reads the zones the workers step settled on).
var steps = []step{
	{"identity", stepIdentity},
	{"cleanup-grace-periods", stepCleanupGracePeriods},
	{"provider", stepProvider},
	{"cloud-profile", stepCloudProfile},
	{"credentials-binding", stepCredentialsBinding},
	{"kubernetes-version", stepKubernetesVersion},
	{"kubernetes-settings", stepKubernetesSettings},
	{"oidc", stepOIDC},
	{"acl", stepACL},
	{"workers", stepWorkers},
	{"infrastructure", stepInfrastructure},
	{"networking", stepNetworking},
	{"dual-stack", stepDualStack},
	{"networking-filter", stepNetworkingFilter},
	{"registry-cache", stepRegistryCache},
	{"audit-log", stepAuditLog},
	{"dns-and-certificates", stepDNS},
	{"oidc-extension", stepOIDCExtension},
	{"nvidia-openshell", stepNvidiaOpenShell},
	{"maintenance", stepMaintenance},
	{"eu-access", stepEUAccess},
	{"seed-selector", stepSeedSelector},
	{"tolerations", stepTolerations},
	{"exposure-class", stepExposureClass},
	{"high-availability", stepHighAvailability},
}

// StepNames lists the generation steps in the order they run.
func StepNames() []string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.name
	}
	return names
}

// Generate returns the Spec of a new cluster for rt. Invalid input yields a *ValidationError.
func Generate(rt Runtime, cfg Config) (Spec, error) {
	return generate(input{rt: rt, cfg: cfg})
}

// GenerateUpdate returns the Spec for an existing cluster whose current state is current: zone
// order is preserved and new zones appended, Kubernetes and machine image versions never go down,
// removed pools are gone, and infrastructure config is regenerated only when zones were added.
func GenerateUpdate(rt Runtime, cfg Config, current Current) (Spec, error) {
	return generate(input{rt: rt, cfg: cfg, current: &current})
}

func generate(in input) (spec Spec, err error) {
	// Generation must never take the controller down; a panic here is a bug, reported as an error.
	defer func() {
		if r := recover(); r != nil {
			spec, err = Spec{}, fmt.Errorf("generate shoot spec: internal error: %v", r)
		}
	}()
	for _, st := range steps {
		if err := st.apply(in, &spec); err != nil {
			return Spec{}, fmt.Errorf("step %s: %w", st.name, err)
		}
	}
	return spec, nil
}
