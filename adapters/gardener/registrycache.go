package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// Labels of the garden copies of registry credentials.
const (
	LabelRuntimeID = "kyma-project.io/runtime-id"
	LabelCacheID   = "kyma-project.io/registry-cache-id"
	LabelShootName = "kyma-project.io/shoot-name"
)

// RegistryCacheGarden implements ports.RegistryCacheGarden on a Gardener project. Secrets are only ever listed with
// the operator's labels, created (a create never replaces an existing Secret) and deleted by reg-cache- name: the
// project's other Secrets hold cloud credentials, which the operator never reads (the client guard enforces it).
type RegistryCacheGarden struct {
	// Cached reads shoots through the garden cache; Live reads shoots from the API server.
	Cached, Live client.Reader
	// Copies lists the copies' metadata: a reader whose Secrets are a metadata-only cache of the operator's
	// labelled Secrets (CopiesCacheOptions). Nil lists them live (through Live), one request per sync: every
	// runtime is synced every interval, with or without the module, and at 5,000 runtimes the live lists used a
	// good part of the garden client's request budget after every restart.
	Copies client.Reader
	Writer client.Writer
	// Namespace is the project namespace (garden-<project>).
	Namespace string
}

var _ ports.RegistryCacheGarden = (*RegistryCacheGarden)(nil)

// Secrets implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) Secrets(ctx context.Context, runtimeID string) ([]registrycache.GardenSecret, error) {
	// Only metadata is needed (the copy's content is never read back); a metadata list also keeps the copied
	// credentials out of the operator's memory when the list is live.
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	r := g.Copies
	if r == nil {
		r = g.Live
	}
	err := r.List(ctx, list, client.InNamespace(g.Namespace),
		client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue, LabelRuntimeID: runtimeID})
	if err != nil {
		return nil, fmt.Errorf("list registry credentials of runtime %s: %w: %w", runtimeID, ports.ErrTransient, err)
	}
	out := make([]registrycache.GardenSecret, 0, len(list.Items))
	for _, s := range list.Items {
		if !strings.HasPrefix(s.Name, registrycache.SecretPrefix) {
			continue
		}
		out = append(out, registrycache.GardenSecret{Name: s.Name, RuntimeID: runtimeID, CacheUID: s.Labels[LabelCacheID],
			ShootName: s.Labels[LabelShootName]})
	}
	return out, nil
}

// CopiesCacheOptions is the garden cache's entry for RegistryCacheGarden.Copies: Secrets as metadata only, and
// only those with the operator's label (the guard refuses a watch without it; the project's other Secrets hold
// cloud credentials).
func CopiesCacheOptions() (client.Object, cache.ByObject) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m, cache.ByObject{Label: labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})}
}

// EnsureSecret implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) EnsureSecret(ctx context.Context, s registrycache.GardenSecret) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: s.Name, Labels: map[string]string{
			wire.LabelManagedBy: wire.ManagedByValue, LabelRuntimeID: s.RuntimeID, LabelCacheID: s.CacheUID, LabelShootName: s.ShootName}},
		Type: corev1.SecretTypeOpaque, Immutable: ptr.To(true), Data: s.Data,
	}
	if err := g.Writer.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Secret %s: %w: %w", s.Name, ports.ErrTransient, err)
	}
	return nil
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
	v := registrycache.ShootView{Exists: true, Reconciled: Observe(s).Reconciled()}
	targets := map[string]string{}
	for _, r := range s.Spec.Resources {
		if r.ResourceRef.Kind == "Secret" {
			targets[r.Name] = r.ResourceRef.Name
			v.ReferencedSecrets = append(v.ReferencedSecrets, r.ResourceRef.Name)
		}
	}
	for _, e := range s.Spec.Extensions {
		if e.Type != shoot.ExtensionRegistryCache || ptr.Deref(e.Disabled, false) || e.ProviderConfig == nil {
			continue
		}
		var cfg registryConfig
		if err := json.Unmarshal(e.ProviderConfig.Raw, &cfg); err != nil {
			continue // not a config the operator wrote: nothing of it counts as applied
		}
		for _, c := range cfg.Caches {
			v.Caches = append(v.Caches, domainCache(c, targets))
		}
	}
	return v
}

// domainCache is the inverse of registryCacheConfig's per-cache mapping.
func domainCache(c registryCache, targets map[string]string) shoot.RegistryCache {
	out := shoot.RegistryCache{Upstream: c.Upstream, RemoteURL: c.RemoteURL, SecretReferenceName: c.SecretReferenceName}
	if c.SecretReferenceName != "" {
		out.CredentialsSecret = targets[c.SecretReferenceName]
	}
	if c.Volume != nil {
		out.VolumeSize, out.VolumeStorageClass = c.Volume.Size, c.Volume.StorageClassName
	}
	if c.GarbageCollection != nil {
		out.GarbageCollectionTTL = c.GarbageCollection.TTL
	}
	if c.HighAvailability != nil {
		out.HighAvailability = c.HighAvailability.Enabled
	}
	if c.Proxy != nil {
		out.HTTPProxy, out.HTTPSProxy = c.Proxy.HTTPProxy, c.Proxy.HTTPSProxy
	}
	if c.HTTP != nil {
		out.TLS = ptr.To(c.HTTP.TLS)
	}
	return out
}
