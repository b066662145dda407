package kube

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// IdentityKubeconfigStore keeps the kubeconfig Secrets of ServiceAccountKubeconfigs in KCP. It is the kubeconfig
// Secret store with the caller's labels and annotations: the same cached reads confirmed live, the same single
// create or pinned server-side apply, the same deletes.
type IdentityKubeconfigStore struct {
	store *KubeconfigSecretStore
}

var _ ports.IdentityKubeconfigStore = (*IdentityKubeconfigStore)(nil)

// NewIdentityKubeconfigStore returns a store with the readers and writer of NewKubeconfigSecretStore.
func NewIdentityKubeconfigStore(cached, live client.Reader, writer client.Client) *IdentityKubeconfigStore {
	return &IdentityKubeconfigStore{store: NewKubeconfigSecretStore(cached, live, writer)}
}

// ReadMetadata implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) ReadMetadata(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	return s.store.ReadMetadata(ctx, ref, mode)
}

// Write implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) Write(ctx context.Context, in ports.IdentityKubeconfigSecret) error {
	return s.store.write(ctx, in.Ref, in.Labels, in.Annotations, in.Kubeconfig, in.ExpectAbsent, in.Precondition)
}

// Delete implements ports.IdentityKubeconfigStore.
func (s *IdentityKubeconfigStore) Delete(ctx context.Context, ref ports.SecretRef, pre ports.Precondition) error {
	return s.store.Delete(ctx, ref, pre)
}
