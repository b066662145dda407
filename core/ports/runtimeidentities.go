package ports

import (
	"context"
	"errors"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
)

// Errors of RuntimeIdentities besides ErrRuntimeUnreachable and ErrTransient.
var (
	// ErrNoRuntimeKubeconfig: the runtime's admin kubeconfig Secret (kubeconfig-<runtimeID> in the KCP namespace)
	// does not exist or holds no kubeconfig: the runtime is not provisioned yet, or was deleted. Errors wrapping it
	// also wrap ErrRuntimeUnreachable.
	ErrNoRuntimeKubeconfig = errors.New("no admin kubeconfig of the runtime")
	// ErrRuntimeObjectNotOwned: an object the request needs in the runtime (its ServiceAccount above all) exists and
	// was not created for it (sakubeconfig.CheckOwned). Nothing was changed; a person must resolve the clash.
	ErrRuntimeObjectNotOwned = errors.New("runtime object not owned by this request")
	// ErrClusterRoleNotFound: the ClusterRole a request binds does not exist in the runtime.
	ErrClusterRoleNotFound = errors.New("cluster role not found in the runtime")
)

// RuntimeRef locates a runtime through the operator's access to it: the admin kubeconfig Secret
// kubeconfig-<RuntimeID> in the KCP namespace Namespace.
type RuntimeRef struct {
	Namespace, RuntimeID string
}

// IssuedToken is a ServiceAccount token returned by the runtime's TokenRequest API.
type IssuedToken struct {
	// Token is the bearer token. It is a credential: never log it, never put it into an event or a condition.
	Token string
	// ExpiresAt is the expiry the runtime's API server reports (it may cap the requested validity).
	ExpiresAt time.Time
}

// RuntimeIdentities manages ServiceAccount identities inside runtime clusters through the admin kubeconfig the
// operator holds for each runtime. Every request to a runtime's API server is bounded by a timeout, so a runtime
// that hangs costs a worker seconds, not minutes; such failures wrap ErrRuntimeUnreachable (no answer, refused
// connection, unauthorized admin credentials) or ErrTransient (throttling, server errors). Writes use server-side
// apply with field manager sakubeconfig.FieldManager and carry sakubeconfig.Labels and Annotations of their owner.
type RuntimeIdentities interface {
	// Endpoint returns the API server address and CA the runtime's admin kubeconfig names. It reads the KCP (a
	// cache), never the runtime. ErrNoRuntimeKubeconfig when the Secret is missing or empty; a kubeconfig that
	// cannot be parsed wraps ErrRuntimeUnreachable.
	Endpoint(ctx context.Context, rt RuntimeRef) (sakubeconfig.Endpoint, error)
	// ClusterRole returns the rules of the runtime's ClusterRole name, non-resource URL rules included, and whether
	// it is aggregated (ErrClusterRoleNotFound when it does not exist). Read only.
	ClusterRole(ctx context.Context, rt RuntimeRef, name string) (sakubeconfig.ClusterRole, error)
	// Apply makes the runtime hold exactly objs for objs.Owner: it creates the namespaces that are missing (never
	// deletes any), applies the ServiceAccount, roles and bindings, and then deletes objects labelled for the owner
	// that objs no longer lists (bindings before roles), so a rule change takes effect in place and the
	// ServiceAccount (with its tokens) survives it. An existing ServiceAccount, role or binding of objs that was not
	// created for the owner is refused with ErrRuntimeObjectNotOwned before anything is written. Idempotent.
	Apply(ctx context.Context, rt RuntimeRef, objs sakubeconfig.Objects) error
	// IssueToken requests a token for sa with the TokenRequest API, valid for validity and bound to the API
	// server's own audience. Not idempotent (every call issues a new token; earlier ones stay valid until they
	// expire or the ServiceAccount is deleted). A missing ServiceAccount is ErrTransient: Apply comes first.
	IssueToken(ctx context.Context, rt RuntimeRef, sa sakubeconfig.ServiceAccount, validity time.Duration) (IssuedToken, error)
	// Remove deletes every object labelled for owner in the runtime (bindings, roles, the ServiceAccount: its tokens
	// stop working at once) and reports whether none is left. Namespaces stay. Calling it again until it reports
	// gone is expected and harmless.
	Remove(ctx context.Context, rt RuntimeRef, owner sakubeconfig.Owner) (gone bool, err error)
}

// IdentityKubeconfigSecret is the complete content of a ServiceAccount kubeconfig Secret.
type IdentityKubeconfigSecret struct {
	Ref SecretRef
	// Labels and Annotations are the Secret's own (sakubeconfig.SecretLabels and SecretAnnotations); labels and
	// annotations others set are kept.
	Labels, Annotations map[string]string
	// Kubeconfig must not be empty.
	Kubeconfig []byte
	// ExpectAbsent makes the write a create (ErrConflict when the Secret exists); otherwise the Secret must still
	// have Precondition's UID and version (ErrConflict when it changed since it was checked).
	ExpectAbsent bool
	Precondition Precondition
}

// IdentityKubeconfigStore keeps the kubeconfig Secrets of ServiceAccountKubeconfigs in the KCP. It shares the
// reading and deleting contract of KubeconfigSecretStore (ReadMetadata never returns the kubeconfig itself;
// Delete of a missing Secret succeeds), and writes atomically like it: a reader sees the old or the new
// kubeconfig, never a missing or empty key.
type IdentityKubeconfigStore interface {
	// ReadMetadata: as KubeconfigSecretStore.ReadMetadata (ErrSecretNotFound when missing).
	ReadMetadata(ctx context.Context, ref SecretRef, mode ReadMode) (KubeconfigSecretMetadata, error)
	// Write creates the Secret or replaces its kubeconfig, labels and annotations in a single request, only the
	// version that was checked (see IdentityKubeconfigSecret). It refuses an empty kubeconfig.
	Write(ctx context.Context, s IdentityKubeconfigSecret) error
	// Delete: as KubeconfigSecretStore.Delete.
	Delete(ctx context.Context, ref SecretRef, pre Precondition) error
}
