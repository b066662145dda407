package fake

import (
	"context"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// IdentityKubeconfigStore is an in-memory ports.IdentityKubeconfigStore on the Secrets of a KubeconfigSecretStore:
// admin and ServiceAccount kubeconfig Secrets live side by side, as in a KCP namespace.
type IdentityKubeconfigStore struct {
	// Secrets holds the Secrets; its WriteErr and DeleteErr apply to this store too.
	Secrets *KubeconfigSecretStore
}

var _ ports.IdentityKubeconfigStore = (*IdentityKubeconfigStore)(nil)

// NewIdentityKubeconfigStore returns a store on an empty KubeconfigSecretStore.
func NewIdentityKubeconfigStore() *IdentityKubeconfigStore {
	return &IdentityKubeconfigStore{Secrets: NewKubeconfigSecretStore()}
}

// ReadMetadata implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) ReadMetadata(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	return s.Secrets.ReadMetadata(ctx, ref, mode)
}

// Write implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) Write(_ context.Context, in ports.IdentityKubeconfigSecret) error {
	return s.Secrets.write(in.Ref, in.Annotations[sakubeconfig.AnnotationOwner], in.Labels, in.Annotations, in.Kubeconfig, in.ExpectAbsent, in.Precondition)
}

// Delete implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) Delete(ctx context.Context, ref ports.SecretRef, pre ports.Precondition) error {
	return s.Secrets.Delete(ctx, ref, pre)
}
