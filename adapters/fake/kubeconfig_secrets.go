package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// secret is one stored Secret: all keys, labels and annotations.
type secret struct {
	data        map[string][]byte
	labels      map[string]string
	annotations map[string]string
	uid         string
	version     int
}

// KubeconfigSecretStore is an in-memory ports.KubeconfigSecretStore that formats Secrets like the real one.
// Reads are always current (ReadCached behaves like ReadLive). Errors can be injected per operation.
type KubeconfigSecretStore struct {
	mu      sync.Mutex
	secrets map[string]*secret // by namespace/name
	writes  int
	uids    int
	deletes []ports.SecretRef
	changes []SecretChange

	// WriteErr, when set, is returned by Write (and nothing is written).
	WriteErr error
	// DeleteErr, when set, is returned by Delete (and nothing is deleted).
	DeleteErr error
}

var _ ports.KubeconfigSecretStore = (*KubeconfigSecretStore)(nil)

// SecretChange is one change made through the port (Write, EnsureLabels, Delete), with the Secret as it was
// before, so a test can judge whether the Secret was the writer's to change.
type SecretChange struct {
	Op  string
	Ref ports.SecretRef
	// Writer is the GardenerCluster (namespace/name) a Write was for; empty for EnsureLabels and Delete.
	Writer string
	// Before is the Secret before the change; nil when it did not exist.
	Before *SecretSnapshot
}

// SecretSnapshot is a Secret's identity and metadata at one moment.
type SecretSnapshot struct {
	UID                 string
	Labels, Annotations map[string]string
}

func (s *KubeconfigSecretStore) logChange(op string, ref ports.SecretRef, writer string, before *secret) {
	c := SecretChange{Op: op, Ref: ports.SecretRef{Namespace: ref.Namespace, Name: ref.Name}, Writer: writer}
	if before != nil {
		c.Before = &SecretSnapshot{UID: before.uid, Labels: maps.Clone(before.labels), Annotations: maps.Clone(before.annotations)}
	}
	s.changes = append(s.changes, c)
}

// Changes returns every change made through the port, in order.
func (s *KubeconfigSecretStore) Changes() []SecretChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.changes)
}

// NewKubeconfigSecretStore returns an empty store.
func NewKubeconfigSecretStore() *KubeconfigSecretStore {
	return &KubeconfigSecretStore{secrets: map[string]*secret{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// ReadMetadata implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) ReadMetadata(_ context.Context, ref ports.SecretRef, _ ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[key(ref.Namespace, ref.Name)]
	if !ok {
		return ports.KubeconfigSecretMetadata{}, fmt.Errorf("read secret %s: %w", ref, ports.ErrSecretNotFound)
	}
	return ports.KubeconfigSecretMetadata{
		Labels:        maps.Clone(sec.labels),
		Annotations:   maps.Clone(sec.annotations),
		HasKubeconfig: len(sec.data[ref.Key]) > 0,
		Name:          ref.Name, UID: sec.uid, ResourceVersion: strconv.Itoa(sec.version),
	}, nil
}

// CachedMetadata implements ports.KubeconfigSecretStore: the store has no cache, a Secret is there or not.
func (s *KubeconfigSecretStore) CachedMetadata(ctx context.Context, ref ports.SecretRef) (ports.KubeconfigSecretMetadata, bool, error) {
	md, err := s.ReadMetadata(ctx, ref, ports.ReadCached)
	if errors.Is(err, ports.ErrSecretNotFound) {
		return md, false, nil
	}
	return md, err == nil, err
}

// Write implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) Write(_ context.Context, in ports.KubeconfigSecret) error {
	annotations := map[string]string{
		kubeconfig.AnnotationLastSync:  kubeconfig.FormatTime(in.IssuedAt),
		kubeconfig.AnnotationExpiresAt: kubeconfig.FormatTime(in.ExpiresAt),
		kubeconfig.AnnotationOwner:     in.OwnerNamespace + "/" + in.OwnerName,
	}
	if in.Shoot.Name != "" {
		annotations[kubeconfig.AnnotationShootName] = in.Shoot.Name
		annotations[kubeconfig.AnnotationShootUID] = in.Shoot.UID
	}
	return s.write(in.Ref, in.OwnerNamespace+"/"+in.OwnerName, kubeconfig.SecretLabels(in.OwnerLabels, in.OwnerName), annotations,
		in.Kubeconfig, in.ExpectAbsent, in.Precondition)
}

// write stores kc with labels and annotations (merged into what others set) under the checks of the Write contract;
// owner is the writer recorded in Changes.
func (s *KubeconfigSecretStore) write(ref ports.SecretRef, owner string, labels, annotations map[string]string, kc []byte, expectAbsent bool, pre ports.Precondition) error {
	if len(kc) == 0 {
		return fmt.Errorf("write secret %s: refusing to store an empty kubeconfig", ref)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.WriteErr != nil {
		return fmt.Errorf("write secret %s: %w", ref, s.WriteErr)
	}
	k := key(ref.Namespace, ref.Name)
	sec, ok := s.secrets[k]
	switch {
	case ok && expectAbsent:
		return fmt.Errorf("create secret %s: it exists: %w", ref, ports.ErrConflict)
	case !ok && !expectAbsent:
		return fmt.Errorf("write secret %s: it is gone: %w", ref, ports.ErrConflict)
	case ok && ((pre.UID != "" && pre.UID != sec.uid) ||
		(pre.ResourceVersion != "" && pre.ResourceVersion != strconv.Itoa(sec.version))):
		return fmt.Errorf("write secret %s: it changed: %w", ref, ports.ErrConflict)
	}
	if ok {
		s.logChange("Write", ref, owner, sec)
	} else {
		s.logChange("Write", ref, owner, nil)
		sec = s.newSecret(nil, nil, nil)
		s.secrets[k] = sec
	}
	sec.version++
	maps.Copy(sec.labels, labels)
	maps.Copy(sec.annotations, annotations)
	sec.data[ref.Key] = bytes.Clone(kc)
	s.writes++
	return nil
}

// EnsureLabels implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) EnsureLabels(_ context.Context, ref ports.SecretRef, labels map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[key(ref.Namespace, ref.Name)]
	if !ok {
		return fmt.Errorf("label secret %s: %w", ref, ports.ErrSecretNotFound)
	}
	s.logChange("EnsureLabels", ref, "", sec)
	maps.Copy(sec.labels, labels)
	sec.version++
	return nil
}

// ListOwnedBy implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) ListOwnedBy(_ context.Context, ownerNamespace, ownerName string) ([]ports.SecretRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ports.SecretRef
	for k, sec := range s.secrets {
		ns, name, _ := strings.Cut(k, "/")
		if sec.labels[wire.LabelManagedBy] != wire.ManagedByValue || sec.labels[kubeconfig.LabelClusterName] != ownerName {
			continue
		}
		if owner, ok := sec.annotations[kubeconfig.AnnotationOwner]; ok && owner != ownerNamespace+"/"+ownerName {
			continue
		} else if !ok && ns != ownerNamespace {
			continue
		}
		out = append(out, ports.SecretRef{Namespace: ns, Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// Delete implements ports.KubeconfigSecretStore.
func (s *KubeconfigSecretStore) Delete(_ context.Context, ref ports.SecretRef, pre ports.Precondition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.DeleteErr != nil {
		return fmt.Errorf("delete secret %s: %w", ref, s.DeleteErr)
	}
	sec, ok := s.secrets[key(ref.Namespace, ref.Name)]
	if !ok {
		return nil
	}
	if (pre.UID != "" && pre.UID != sec.uid) || (pre.ResourceVersion != "" && pre.ResourceVersion != strconv.Itoa(sec.version)) {
		return fmt.Errorf("delete secret %s: it changed: %w", ref, ports.ErrConflict)
	}
	s.logChange("Delete", ref, "", sec)
	delete(s.secrets, key(ref.Namespace, ref.Name))
	s.deletes = append(s.deletes, ports.SecretRef{Namespace: ref.Namespace, Name: ref.Name})
	return nil
}

// Deleted returns every Secret Delete removed, in order.
func (s *KubeconfigSecretStore) Deleted() []ports.SecretRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deletes)
}

func (s *KubeconfigSecretStore) newSecret(data map[string][]byte, labels, annotations map[string]string) *secret {
	s.uids++
	return &secret{data: cloneData(data), labels: nonNil(labels), annotations: nonNil(annotations), uid: fmt.Sprintf("secret-uid-%d", s.uids), version: 1}
}

// Put stores a Secret as someone else would have written it (for example an older operator), bypassing Write.
func (s *KubeconfigSecretStore) Put(namespace, name string, data map[string][]byte, labels, annotations map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[key(namespace, name)] = s.newSecret(data, labels, annotations)
}

// Kubeconfig returns the data under ref's key, or an error when the Secret does not exist.
func (s *KubeconfigSecretStore) Kubeconfig(ref ports.SecretRef) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[key(ref.Namespace, ref.Name)]
	if !ok {
		return nil, fmt.Errorf("secret %s: %w", ref, ports.ErrSecretNotFound)
	}
	return bytes.Clone(sec.data[ref.Key]), nil
}

// Exists reports whether the Secret exists.
func (s *KubeconfigSecretStore) Exists(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.secrets[key(namespace, name)]
	return ok
}

// Writes returns how many successful writes happened.
func (s *KubeconfigSecretStore) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func cloneData(in map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(in))
	for k, v := range in {
		out[k] = bytes.Clone(v)
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
