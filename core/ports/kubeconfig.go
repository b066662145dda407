package ports

import (
	"context"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// IssuedKubeconfig is a kubeconfig handed out by Gardener.
type IssuedKubeconfig struct {
	// Kubeconfig is the kubeconfig file (YAML), never empty.
	Kubeconfig []byte
	// ExpiresAt is the expiry Gardener reports, which may differ from the requested validity (Gardener caps it).
	ExpiresAt time.Time
}

// KubeconfigIssuer hands out admin kubeconfigs for shoots of the operator's Gardener project.
type KubeconfigIssuer interface {
	// IssueAdminKubeconfig requests a new admin kubeconfig for the shoot valid for about validity. Every call issues a
	// new credential (not idempotent, but harmless to repeat: earlier credentials stay valid until they expire). It
	// blocks for one request to Gardener. Errors wrap ErrShootNotFound, ErrShootNotReady, ErrForbidden or ErrTransient.
	IssueAdminKubeconfig(ctx context.Context, shootName string, validity time.Duration) (IssuedKubeconfig, error)
}

// SecretRef locates the key of a kubeconfig Secret.
type SecretRef struct {
	Namespace, Name, Key string
}

// String renders the reference as namespace/name:key, for logs and messages.
func (r SecretRef) String() string { return r.Namespace + "/" + r.Name + ":" + r.Key }

// KubeconfigSecretMetadata is what the store reveals about an existing kubeconfig Secret: enough to decide about
// rotation without looking at (or logging) the credential.
type KubeconfigSecretMetadata struct {
	// Labels are the Secret's labels.
	Labels map[string]string
	// Annotations are the Secret's annotations (issue time and expiry, see core/domain/kubeconfig).
	Annotations map[string]string
	// HasKubeconfig is true when the key holds non-empty data.
	HasKubeconfig bool
	// Name, UID and ResourceVersion identify the Secret and its version (for the ownership checks,
	// kubeconfig.CheckClusterSecret and sakubeconfig.CheckRequestSecret, and for preconditions).
	Name, UID, ResourceVersion string
}

// KubeconfigSecret is the complete content the store writes.
type KubeconfigSecret struct {
	Ref SecretRef
	// Owner is the GardenerCluster (namespace and name) the Secret belongs to; its name is the runtime ID.
	OwnerNamespace, OwnerName string
	// OwnerLabels are the GardenerCluster's labels; the store adds the managed-by and cluster-name labels
	// (kubeconfig.SecretLabels).
	OwnerLabels map[string]string
	// Kubeconfig is the kubeconfig to store; must not be empty.
	Kubeconfig []byte
	// IssuedAt and ExpiresAt are recorded as annotations (RFC3339, UTC).
	IssuedAt, ExpiresAt time.Time
	// Shoot is the shoot the kubeconfig was issued for, recorded as annotations.
	Shoot kubeconfig.ShootRef
	// ExpectAbsent makes the write a create that fails with ErrConflict when the Secret exists; otherwise the
	// Secret must still have Precondition's UID and version (ErrConflict when it changed since it was checked).
	ExpectAbsent bool
	Precondition Precondition
}

// KubeconfigSecretStore keeps kubeconfig Secrets.
type KubeconfigSecretStore interface {
	// ReadMetadata returns the metadata of the Secret, or an error wrapping ErrSecretNotFound when it does not exist.
	// It never returns the kubeconfig itself. Non-blocking with ReadCached except for cache start-up.
	ReadMetadata(ctx context.Context, ref SecretRef, mode ReadMode) (KubeconfigSecretMetadata, error)
	// CachedMetadata is ReadMetadata from the cache alone: found is false when the cache holds no such Secret, which
	// is no proof that none exists (the cache may hold only the operator's labelled Secrets and lags behind
	// writes). ReadMetadata with ReadCached confirms such a miss live; this is for a first decision that is taken
	// again with ReadLive before anything is written or Gardener is asked, where that confirmation would read the
	// Secret live twice. Non-blocking except for cache start-up.
	CachedMetadata(ctx context.Context, ref SecretRef) (md KubeconfigSecretMetadata, found bool, err error)
	// Write creates the Secret or replaces its kubeconfig, labels and annotations in a single request, so a reader
	// sees either the old or the new kubeconfig, never a missing or empty key. It writes only the Secret that was
	// checked: a create when s.ExpectAbsent, else the version s.Precondition names (ErrConflict otherwise, and
	// nothing is written). Labels and data keys set by others are kept.
	Write(ctx context.Context, s KubeconfigSecret) error
	// EnsureLabels sets the given labels on the Secret (adding or overwriting, never removing) without touching the
	// kubeconfig. ErrSecretNotFound when the Secret does not exist.
	EnsureLabels(ctx context.Context, ref SecretRef, labels map[string]string) error
	// ListOwnedBy returns the Secrets written for the GardenerCluster ownerNamespace/ownerName (their Key is empty).
	// It is how Secrets left behind by a GardenerCluster deleted without the operator's finalizer are found. Reads
	// the cache; an empty list is not an error.
	ListOwnedBy(ctx context.Context, ownerNamespace, ownerName string) ([]SecretRef, error)
	// Delete removes the Secret if it still has pre's UID (and version, when set; ErrConflict otherwise). Deleting
	// a Secret that does not exist succeeds: after Delete returns nil the Secret is gone (or being removed).
	Delete(ctx context.Context, ref SecretRef, pre Precondition) error
}

// KubeconfigRequest is what a GardenerCluster asks of kubeconfig management, as read from the KCP.
type KubeconfigRequest struct {
	// Namespace and Name identify the GardenerCluster; Name is the runtime ID.
	Namespace, Name string
	// Labels are the GardenerCluster's labels (copied to the Secret).
	Labels map[string]string
	// Shoot is the shoot whose admin kubeconfig is asked for; Secret where it goes.
	Shoot  string
	Secret SecretRef
	// Force is the force-rotation annotation.
	Force bool
	// Deleting is true once the GardenerCluster is being deleted: nothing is issued for it any more.
	Deleting bool
	// History is what its status records of earlier passes.
	History kubeconfig.History
}

// KubeconfigRequests confirms a GardenerCluster's request with the API server before the operator spends a Gardener
// call on it or writes for it: a cache may still show a force annotation already handled, or miss a deletion.
type KubeconfigRequests interface {
	// Confirm reads the GardenerCluster namespace/name from the API server, not a cache. exists is false when it
	// does not exist; one being deleted exists with Deleting set. Errors wrap ErrTransient.
	Confirm(ctx context.Context, namespace, name string) (req KubeconfigRequest, exists bool, err error)
}
