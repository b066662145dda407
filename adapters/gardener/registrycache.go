package gardener

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// Labels of the garden copies of registry credentials.
const (
	LabelRuntimeID = "kyma-project.io/runtime-id"
	LabelCacheID   = "kyma-project.io/registry-cache-id"
	LabelShootName = "kyma-project.io/shoot-name"
)

// RegistryCacheGarden implements ports.RegistryCacheGarden and ports.RegistryCredentialOwners on a Gardener project.
// Secrets are never listed or watched (the project's Secrets hold cloud credentials; RBAC cannot limit a list to
// some of them): copies are created (a create never replaces an existing Secret), read and deleted by their
// reg-cache-* name only, which the KCP records (ports.RegistryCacheLedger). The client guard enforces the prefix.
type RegistryCacheGarden struct {
	// Cached reads shoots through the garden cache; Live reads shoots from the API server.
	Cached, Live client.Reader
	Writer       client.Writer
	// Namespace is the project namespace (garden-<project>).
	Namespace string
}

var (
	_ ports.RegistryCacheGarden      = (*RegistryCacheGarden)(nil)
	_ ports.RegistryCredentialOwners = (*RegistryCacheGarden)(nil)
)

// OwnedCopies implements ports.RegistryCredentialOwners: each reg-cache-* name is read by name, metadata only
// (the guard allows get on reg-cache-* names only), and kept when it carries the operator's label and the
// runtime's ID. A name without the prefix is never asked for.
func (g *RegistryCacheGarden) OwnedCopies(ctx context.Context, runtimeID string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, registrycache.SecretPrefix) {
			continue
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := g.Live.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: n}, m)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read Secret %s: %w: %w", n, ports.ErrTransient, err)
		}
		if l := m.GetLabels(); l[wire.LabelManagedBy] == wire.ManagedByValue && l[LabelRuntimeID] == runtimeID {
			out = append(out, n)
		}
	}
	return out, nil
}

// EnsureSecret implements ports.RegistryCacheGarden. An existing Secret of the name is read back (live, by name)
// and used only when it is the copy this call would have made: the operator's labels for the same runtime and
// cache, immutable, and the same data. Anything else (a Secret someone placed under the name first) is
// ports.ErrCopyConflict and is never referenced.
func (g *RegistryCacheGarden) EnsureSecret(ctx context.Context, s registrycache.GardenSecret) (bool, error) {
	labels := map[string]string{wire.LabelManagedBy: wire.ManagedByValue, LabelRuntimeID: s.RuntimeID, LabelCacheID: s.CacheUID,
		LabelShootName: s.ShootName}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: s.Name, Labels: labels},
		Type:       corev1.SecretTypeOpaque, Immutable: ptr.To(true), Data: s.Data,
	}
	err := g.Writer.Create(ctx, sec)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("create Secret %s: %w: %w", s.Name, ports.ErrTransient, err)
	}
	got := &corev1.Secret{}
	if err := g.Live.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: s.Name}, got); err != nil {
		return false, fmt.Errorf("read back existing Secret %s: %w: %w", s.Name, ports.ErrTransient, err)
	}
	if why := copyMismatch(got, s); why != "" {
		return false, fmt.Errorf("secret %s exists but is not the operator's copy (%s): %w", s.Name, why, ports.ErrCopyConflict)
	}
	return false, nil
}

// copyMismatch says why an existing Secret is not the copy s ("" when it is). It names fields, never values.
func copyMismatch(got *corev1.Secret, s registrycache.GardenSecret) string {
	l := got.Labels
	switch {
	case l[wire.LabelManagedBy] != wire.ManagedByValue || l[LabelRuntimeID] != s.RuntimeID || l[LabelCacheID] != s.CacheUID:
		return "labels differ"
	case !ptr.Deref(got.Immutable, false):
		return "not immutable"
	case got.Type != corev1.SecretTypeOpaque:
		return "type differs"
	case !maps.EqualFunc(got.Data, s.Data, bytes.Equal):
		return "data differs"
	}
	return ""
}

// DeleteSecret implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) DeleteSecret(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, registrycache.SecretPrefix) {
		return fmt.Errorf("refusing to delete Secret %s: not a copy of registry credentials", name)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: name}}
	if err := g.Writer.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Secret %s: %w: %w", name, ports.ErrTransient, err)
	}
	return nil
}

// Shoot implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) Shoot(ctx context.Context, name string, mode ports.ReadMode) (registrycache.ShootView, error) {
	r := g.Cached
	if mode == ports.ReadLive || r == nil {
		r = g.Live
	}
	s := &gardencorev1beta1.Shoot{}
	err := r.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return registrycache.ShootView{}, nil
	}
	if err != nil {
		return registrycache.ShootView{}, fmt.Errorf("get shoot %s: %w: %w", name, ports.ErrTransient, err)
	}
	return RegistryCacheView(s), nil
}

// RegistryCacheView reads what a shoot holds of registry caches: the caches of its enabled registry-cache
// extension (credentials resolved through spec.resources), every Secret spec.resources references, and whether
// Gardener reconciled the current generation.
func RegistryCacheView(s *gardencorev1beta1.Shoot) registrycache.ShootView {
	v := registrycache.ShootView{Exists: true, Reconciled: Observe(s).Reconciled(), Caches: translate.RegistryCaches(s)}
	for _, r := range s.Spec.Resources {
		if r.ResourceRef.Kind == "Secret" {
			v.ReferencedSecrets = append(v.ReferencedSecrets, r.ResourceRef.Name)
		}
	}
	return v
}
