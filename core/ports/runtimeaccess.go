package ports

import (
	"context"
	"time"
)

// RuntimeConfig is the access configuration the operator keeps inside a runtime cluster.
type RuntimeConfig struct {
	RuntimeID string
	// Administrators are user names bound to cluster-admin.
	Administrators []string
}

// RuntimeConfigurator changes objects inside a runtime cluster through its kubeconfig Secret.
type RuntimeConfigurator interface {
	// Configure makes the administrators' cluster-admin ClusterRoleBindings match cfg exactly: missing bindings
	// are created, bindings for users no longer listed are deleted, but only bindings carrying the operator's
	// managed-by label (bindings people created by hand are never touched). Idempotent. Blocks for a few
	// requests to the runtime. Errors wrap ErrRuntimeUnreachable or ErrTransient.
	Configure(ctx context.Context, cfg RuntimeConfig) error
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
	// SKRDomain is recorded as the skr-domain annotation; empty leaves it unset.
	SKRDomain string
}

// AccessObjects keeps the KCP objects that give access to a runtime: its GardenerCluster and, through it, the
// kubeconfig Secret (written by the GardenerCluster controller).
type AccessObjects interface {
	// InSync reports whether the GardenerCluster exists with spec's shoot, Secret and labels. Reads the cache.
	InSync(ctx context.Context, spec GardenerClusterSpec) (bool, error)
	// Ensure creates the GardenerCluster or updates its spec, labels and annotation; labels set by others (KEB)
	// are kept unless spec sets them. Idempotent.
	Ensure(ctx context.Context, spec GardenerClusterSpec) error
	// KubeconfigReady reports whether the kubeconfig Secret of the runtime exists with a non-empty key and a
	// recorded expiry after now (a Runtime is not Ready on an expired kubeconfig). Reads the cache.
	KubeconfigReady(ctx context.Context, namespace, runtimeID string, now time.Time) (bool, error)
	// Remove deletes the GardenerCluster and the kubeconfig Secret. It returns true once both are observed gone;
	// calling it again until then is expected and harmless.
	Remove(ctx context.Context, namespace, runtimeID string) (gone bool, err error)
}
