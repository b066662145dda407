// Package kube implements the Kubernetes-side ports on a KCP cluster with controller-runtime clients.
package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// FieldOwner is the server-side-apply field manager of kubeconfig Secret writes.
const FieldOwner = "kim-kubeconfig"

// KubeconfigSecretStore keeps kubeconfig Secrets in KCP. Writes are server-side applies: one request replaces the
// kubeconfig, labels and annotations together without needing the current resourceVersion, so a rotation can
// neither leave the key empty nor fail with a conflict.
type KubeconfigSecretStore struct {
	cached client.Reader
	live   client.Reader
	writer client.Client
}

var _ ports.KubeconfigSecretStore = (*KubeconfigSecretStore)(nil)

// NewKubeconfigSecretStore returns a store that reads from cached (a cache holding the Secrets labelled
// managed-by=infrastructure-manager), confirms with live (an uncached reader, such as the manager's API reader) and
// writes with writer.
func NewKubeconfigSecretStore(cached, live client.Reader, writer client.Client) *KubeconfigSecretStore {
	return &KubeconfigSecretStore{cached: cached, live: live, writer: writer}
}

// ReadMetadata implements ports.KubeconfigSecretStore. A cached miss is confirmed live: the cache only holds Secrets
// carrying our managed-by label, and Secrets of older GardenerClusters may lack it; they are adopted on the next write.
func (s *KubeconfigSecretStore) ReadMetadata(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	var err error = errSecretNotFound
	cached := mode == ports.ReadCached
	if cached {
		err = s.cached.Get(ctx, key, &sec)
	}
	if apierrors.IsNotFound(err) {
		cached = false
		err = s.live.Get(ctx, key, &sec)
	}
	switch {
	case apierrors.IsNotFound(err):
		return ports.KubeconfigSecretMetadata{}, fmt.Errorf("read secret %s: %w", ref, ports.ErrSecretNotFound)
	case err != nil:
		return ports.KubeconfigSecretMetadata{}, fmt.Errorf("read secret %s: %w", ref, err)
	}
	return metadataOf(&sec, ref.Key, cached), nil
}

// CachedMetadata implements ports.KubeconfigSecretStore: the cache alone, a miss is not confirmed.
func (s *KubeconfigSecretStore) CachedMetadata(ctx context.Context, ref ports.SecretRef) (ports.KubeconfigSecretMetadata, bool, error) {
	var sec corev1.Secret
	err := s.cached.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return ports.KubeconfigSecretMetadata{}, false, nil
	case err != nil:
		return ports.KubeconfigSecretMetadata{}, false, fmt.Errorf("read secret %s from the cache: %w", ref, err)
	}
	return metadataOf(&sec, ref.Key, true), true, nil
}

// metadataOf is what the store reveals of sec; cached tells that sec was read from the cache (see hasData).
func metadataOf(sec *corev1.Secret, key string, cached bool) ports.KubeconfigSecretMetadata {
	return ports.KubeconfigSecretMetadata{
		Labels:        sec.Labels,
		Annotations:   withoutCacheRecord(sec.Annotations),
		HasKubeconfig: hasData(sec, key, cached),
		Name:          sec.Name, UID: string(sec.UID), ResourceVersion: sec.ResourceVersion,
	}
}

// errSecretNotFound starts a live read without a cached attempt.
var errSecretNotFound = apierrors.NewNotFound(corev1.Resource("secrets"), "")

// Write implements ports.KubeconfigSecretStore: a create for a Secret that must not exist yet, otherwise one
// server-side apply pinned to the checked UID and resourceVersion.
func (s *KubeconfigSecretStore) Write(ctx context.Context, in ports.KubeconfigSecret) error {
	labels := kubeconfig.SecretLabels(in.OwnerLabels, in.OwnerName)
	annotations := map[string]string{
		kubeconfig.AnnotationLastSync:  kubeconfig.FormatTime(in.IssuedAt),
		kubeconfig.AnnotationExpiresAt: kubeconfig.FormatTime(in.ExpiresAt),
		kubeconfig.AnnotationOwner:     in.OwnerNamespace + "/" + in.OwnerName,
	}
	if in.Shoot.Name != "" {
		annotations[kubeconfig.AnnotationShootName] = in.Shoot.Name
		annotations[kubeconfig.AnnotationShootUID] = in.Shoot.UID
	}
	return s.write(ctx, in.Ref, labels, annotations, in.Kubeconfig, in.ExpectAbsent, in.Precondition)
}

// write stores kc under ref's key with the given labels and annotations in one request: a plain create when
// expectAbsent (a Secret someone created meanwhile is not overwritten), otherwise a server-side apply pinned to pre.
// Labels, annotations and keys others set are kept.
func (s *KubeconfigSecretStore) write(ctx context.Context, ref ports.SecretRef, labels, annotations map[string]string, kc []byte,
	expectAbsent bool, pre ports.Precondition) error {
	if len(kc) == 0 {
		return fmt.Errorf("write secret %s: refusing to store an empty kubeconfig", ref)
	}
	data := map[string][]byte{ref.Key: kc}
	if expectAbsent {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace, Labels: labels,
			Annotations: annotations}, Data: data, Type: corev1.SecretTypeOpaque}
		err := s.writer.Create(ctx, sec, client.FieldOwner(FieldOwner))
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create secret %s: %w: %w", ref, ports.ErrConflict, err)
		}
		if err != nil {
			return fmt.Errorf("create secret %s: %w", ref, err)
		}
		return nil
	}
	ac := corev1ac.Secret(ref.Name, ref.Namespace).WithLabels(labels).WithAnnotations(annotations).WithData(data)
	// The UID and version pin the write to the Secret whose ownership was checked. ForceOwnership takes the fields
	// over from whoever wrote them before (KEB for its legacy Secret, an older operator).
	if pre.UID != "" {
		ac = ac.WithUID(types.UID(pre.UID))
	}
	if pre.ResourceVersion != "" {
		ac = ac.WithResourceVersion(pre.ResourceVersion)
	}
	err := s.writer.Apply(ctx, ac, client.FieldOwner(FieldOwner), client.ForceOwnership)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return fmt.Errorf("write secret %s: %w: %w", ref, ports.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("write secret %s: %w", ref, err)
	}
	return nil
}

// EnsureLabels implements ports.KubeconfigSecretStore with a merge patch of the labels only.
func (s *KubeconfigSecretStore) EnsureLabels(ctx context.Context, ref ports.SecretRef, labels map[string]string) error {
	sec := &corev1.Secret{}
	sec.Name, sec.Namespace = ref.Name, ref.Namespace
	patch := map[string]any{"metadata": map[string]any{"labels": labels}}
	raw, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("label secret %s: %w", ref, err)
	}
	err = s.writer.Patch(ctx, sec, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldOwner+"-labels"))
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("label secret %s: %w", ref, ports.ErrSecretNotFound)
	}
	if err != nil {
		return fmt.Errorf("label secret %s: %w", ref, err)
	}
	return nil
}

// ListOwnedBy implements ports.KubeconfigSecretStore. A Secret belongs to the owner named in its owner annotation;
// a Secret without it (written by an older operator) belongs to the GardenerCluster named by its cluster-name label in
// its own namespace, which is how KEB lays them out.
func (s *KubeconfigSecretStore) ListOwnedBy(ctx context.Context, ownerNamespace, ownerName string) ([]ports.SecretRef, error) {
	var list corev1.SecretList
	if err := s.cached.List(ctx, &list, client.MatchingLabels{
		wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: ownerName,
	}); err != nil {
		return nil, fmt.Errorf("list secrets of %s/%s: %w", ownerNamespace, ownerName, err)
	}
	var out []ports.SecretRef
	for _, sec := range list.Items {
		owner, ok := sec.Annotations[kubeconfig.AnnotationOwner]
		if (ok && owner == ownerNamespace+"/"+ownerName) || (!ok && sec.Namespace == ownerNamespace) {
			out = append(out, ports.SecretRef{Namespace: sec.Namespace, Name: sec.Name})
		}
	}
	return out, nil
}

// Delete implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) Delete(ctx context.Context, ref ports.SecretRef, pre ports.Precondition) error {
	sec := &corev1.Secret{}
	sec.Name, sec.Namespace = ref.Name, ref.Namespace
	var p client.Preconditions
	if pre.UID != "" {
		uid := types.UID(pre.UID)
		p.UID = &uid
	}
	if pre.ResourceVersion != "" {
		p.ResourceVersion = &pre.ResourceVersion
	}
	err := s.writer.Delete(ctx, sec, p)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("delete secret %s: %w: %w", ref, ports.ErrConflict, err)
	case err != nil:
		return fmt.Errorf("delete secret %s: %w", ref, err)
	}
	return nil
}
