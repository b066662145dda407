package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// RuntimeConfigurator keeps the objects the operator owns inside a runtime cluster, through the runtime's kubeconfig
// Secret (core/domain/runtimeconfig decides what they are).
type RuntimeConfigurator interface {
	// Configure makes the runtime hold d: namespace kyma-system exists (it is never deleted), the
	// kyma-provisioning-info ConfigMap holds d.ProvisioningInfo, the OpenIDConnect resources labelled as the
	// operator's are exactly d.OIDC (only when d.ManageOIDC), the cluster-admin bindings labelled as the operator's
	// are exactly d.Administrators, and the bootstrap manifests (when d.Bootstrap is set) are applied and their
	// Deployments checked. Writes are server-side applies with field manager kim, made only where the runtime (read
	// live, not from a cache) differs; new objects are written before obsolete ones are removed, so an
	// administrator or issuer that stays never loses its object. Objects without the operator's labels are never
	// deleted. Parts are independent: a failing part does not stop the others.
	//
	// The call blocks for a few requests to the runtime and never longer than the configurator's timeout: a runtime
	// API server that does not answer makes it return with an error wrapping ErrRuntimeUnreachable, and the parts
	// it could not finish report runtimeconfig.ReasonRuntimeAPIServerUnreachable. The Result is always filled; the
	// error is nil when the runtime answered (problems of single parts are in the Result). Idempotent.
	Configure(ctx context.Context, d runtimeconfig.Desired) (runtimeconfig.Result, error)
	// Forget drops what the configurator keeps for a runtime (its client and connections); called when the Runtime
	// is deleted. A later Configure starts afresh.
	Forget(runtimeID string)
}

// BootstrapSource reads the landscape's bootstrap manifests and pull secret (operator configuration
// runtime.bootstrap) from KCP.
type BootstrapSource interface {
	// Load returns the bootstrap set. Manifests that cannot be used are not an error: the set's Problem says why
	// (runtimeconfig.ReasonBootstrapManifestsInvalid). Errors wrap ErrTransient (reading failed). Reads a cache.
	Load(ctx context.Context) (*runtimeconfig.Bootstrap, error)
}

// GardenerClusterSpec is the GardenerCluster the operator keeps for a Runtime (named by the runtime ID, in the
// Runtime's namespace, owned by the Runtime).
type GardenerClusterSpec struct {
	Namespace string
	RuntimeID string
	// OwnerUID is the Runtime's UID (owner reference).
	OwnerUID  string
	ShootName string
	// SecretName and SecretKey locate the kubeconfig (kubeconfig-<runtimeID>, key "config").
	SecretName string
	SecretKey  string
	// Labels are copied from the Runtime (docs/keb-contract.md).
	Labels map[string]string
	// InitialLabels are set when the operator creates the GardenerCluster, on keys Labels does not set; an
	// existing GardenerCluster keeps what it has (KEB's say managed-by lifecycle-manager), and they are no drift.
	InitialLabels map[string]string
	// SKRDomain is recorded as the skr-domain annotation; empty leaves it unset.
	SKRDomain string
}

// KubeconfigState is what AccessObjects.KubeconfigReady observed of a runtime's kubeconfig Secret.
type KubeconfigState int

const (
	// KubeconfigMissing: no Secret, an empty key, or a recorded expiry that has passed.
	KubeconfigMissing KubeconfigState = iota
	// KubeconfigUnrecorded: a filled Secret without the operator's record of its expiry, as the previous
	// infrastructure manager wrote it. The GardenerCluster controller replaces it with one of its own at once; until
	// then nobody knows when it expires.
	KubeconfigUnrecorded
	// KubeconfigValid: a filled Secret whose recorded expiry is after now.
	KubeconfigValid
)

// AccessObjects keeps the KCP objects that give access to a runtime: its GardenerCluster and, through it, the
// kubeconfig Secret (written by the GardenerCluster controller).
type AccessObjects interface {
	// InSync reports whether the GardenerCluster exists with spec's shoot, Secret and labels. Reads the cache.
	InSync(ctx context.Context, spec GardenerClusterSpec) (bool, error)
	// Ensure creates the GardenerCluster (with spec's initial labels) or updates its spec, labels and annotation;
	// labels set by others (KEB) are kept unless spec sets them. Idempotent.
	Ensure(ctx context.Context, spec GardenerClusterSpec) error
	// KubeconfigReady reports the state of the runtime's kubeconfig Secret: KubeconfigValid when it exists with a
	// non-empty key and a recorded expiry after now (a Runtime is not Ready on an expired kubeconfig). Reads the
	// cache.
	KubeconfigReady(ctx context.Context, namespace, runtimeID string, now time.Time) (KubeconfigState, error)
	// Remove deletes the GardenerCluster and the kubeconfig Secret. It returns true once both are observed gone;
	// calling it again until then is expected and harmless.
	Remove(ctx context.Context, namespace, runtimeID string) (gone bool, err error)
}
