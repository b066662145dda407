package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RegistryCacheRuntimes implements ports.RegistryCacheRuntimes on the KCP.
type RegistryCacheRuntimes struct {
	// Client reads Runtimes (cache) and applies their spec.imageRegistryCache.
	Client client.Client
	// Live reads a Runtime's managedFields from the API server (the cache drops other managers' entries) when an
	// apply conflicts; nil: a conflict is never resolved by taking the field over.
	Live client.Reader
}

// previousRegistryCacheManagers are the field managers under which the previous infrastructure manager wrote
// spec.imageRegistryCache (its registry cache controller updates the whole Runtime): the field is this operator's
// job once it adopted the runtime, so an apply that conflicts only with them takes the field over.
var previousRegistryCacheManagers = []string{"registrycachecontroller"}

var _ ports.RegistryCacheRuntimes = (*RegistryCacheRuntimes)(nil)

// Get implements ports.RegistryCacheRuntimes.
func (r *RegistryCacheRuntimes) Get(ctx context.Context, ref ports.RuntimeRef) (ports.RegistryCacheRuntime, error) {
	rt := &imv1.Runtime{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.RuntimeID}, rt)
	if apierrors.IsNotFound(err) {
		return ports.RegistryCacheRuntime{}, nil
	}
	if err != nil {
		return ports.RegistryCacheRuntime{}, transient("get runtime "+ref.RuntimeID, err)
	}
	out := ports.RegistryCacheRuntime{Exists: true, Deleting: rt.DeletionTimestamp != nil, ShootName: rt.Spec.Shoot.Name,
		Provisioned: rt.Status.ProvisioningCompleted, Managed: ownsCaches(rt)}
	for _, c := range rt.Spec.ImageRegistryCache {
		out.Entries = append(out.Entries, registrycache.Entry{Name: c.Name, Namespace: c.Namespace, UID: c.UID, Cache: mapping.RegistryCache(c.Config)})
	}
	return out, nil
}

// RuntimeCacheTransform is the cache transform of Runtimes: of the managedFields it keeps only the registry cache's
// field manager entries, which ownsCaches reads; the rest is dropped like on every other cached object (at fleet
// size managedFields are a good part of the cache). Idempotent, as client-go may transform a cached object again.
func RuntimeCacheTransform(in any) (any, error) {
	if rt, ok := in.(*imv1.Runtime); ok && len(rt.ManagedFields) > 0 {
		kept := rt.ManagedFields[:0:0]
		for _, m := range rt.ManagedFields {
			if m.Manager == imv1.FieldManagerRegistryCache {
				kept = append(kept, m)
			}
		}
		rt.ManagedFields = kept
	}
	return in, nil
}

// ownsCaches tells whether the operator's field manager owns spec.imageRegistryCache.
func ownsCaches(rt *imv1.Runtime) bool {
	for _, m := range rt.ManagedFields {
		if m.Manager == imv1.FieldManagerRegistryCache && m.FieldsV1 != nil && bytes.Contains(m.FieldsV1.GetRawBytes(), []byte(`"f:imageRegistryCache"`)) {
			return true
		}
	}
	return false
}

// ApplyEntries implements ports.RegistryCacheRuntimes: a server-side apply of only spec.imageRegistryCache with
// the field manager imv1.FieldManagerRegistryCache, never forced. Without entries the apply names no field, which
// removes the field where only this manager owned it.
func (r *RegistryCacheRuntimes) ApplyEntries(ctx context.Context, ref ports.RuntimeRef, entries []registrycache.Entry) error {
	doc := map[string]any{
		"apiVersion": imv1.GroupVersion.String(), "kind": "Runtime",
		"metadata": map[string]any{"name": ref.RuntimeID, "namespace": ref.Namespace},
	}
	if len(entries) > 0 {
		caches := make([]imv1.ImageRegistryCache, 0, len(entries))
		for _, e := range entries {
			caches = append(caches, imv1.ImageRegistryCache{Name: e.Name, Namespace: e.Namespace, UID: e.UID, Config: mapping.RegistryCacheConfig(e.Cache)})
		}
		doc["spec"] = map[string]any{"imageRegistryCache": caches}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode apply of runtime %s: %w", ref.RuntimeID, err)
	}
	rt := &imv1.Runtime{}
	rt.Namespace, rt.Name = ref.Namespace, ref.RuntimeID
	err = r.Client.Patch(ctx, rt, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner(imv1.FieldManagerRegistryCache))
	if apierrors.IsConflict(err) {
		if took, terr := r.takeOverFromPrevious(ctx, ref, doc); took {
			return terr
		}
	}
	switch {
	case apierrors.IsConflict(err):
		return fmt.Errorf("apply spec.imageRegistryCache of runtime %s: %w: %w", ref.RuntimeID, ports.ErrFieldOwnedByOthers, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("apply spec.imageRegistryCache of runtime %s: %w: %w", ref.RuntimeID, ports.ErrConflict, err)
	case apierrors.IsInvalid(err):
		return fmt.Errorf("apply spec.imageRegistryCache of runtime %s: %w", ref.RuntimeID, err)
	case err != nil:
		return transient("apply spec.imageRegistryCache of runtime "+ref.RuntimeID, err)
	}
	return nil
}

// takeOverFromPrevious forces the apply doc when the live Runtime's spec.imageRegistryCache is owned only by the
// previous manager's field managers (an adopted runtime), with the read resourceVersion as precondition: a write
// by anyone in between (KEB) fails the apply instead of being overridden. took is false when someone else owns
// the field too or the Runtime could not be read: the first apply's conflict stands.
func (r *RegistryCacheRuntimes) takeOverFromPrevious(ctx context.Context, ref ports.RuntimeRef, doc map[string]any) (took bool, err error) {
	if r.Live == nil {
		return false, nil
	}
	live := &imv1.Runtime{}
	if err := r.Live.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.RuntimeID}, live); err != nil {
		return false, nil //nolint:nilerr // the first apply's conflict is the answer; the next pass reads again
	}
	owners := 0
	for _, m := range live.ManagedFields {
		if m.Manager == imv1.FieldManagerRegistryCache || m.FieldsV1 == nil || !bytes.Contains(m.FieldsV1.GetRawBytes(), []byte(`"f:imageRegistryCache"`)) {
			continue
		}
		if !slices.Contains(previousRegistryCacheManagers, m.Manager) {
			return false, nil
		}
		owners++
	}
	if owners == 0 {
		return false, nil
	}
	doc["metadata"].(map[string]any)["resourceVersion"] = live.ResourceVersion
	raw, err := json.Marshal(doc)
	if err != nil {
		return true, fmt.Errorf("encode apply of runtime %s: %w", ref.RuntimeID, err)
	}
	err = r.Client.Patch(ctx, live, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner(imv1.FieldManagerRegistryCache), client.ForceOwnership)
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return true, fmt.Errorf("take spec.imageRegistryCache of runtime %s over from the previous manager: %w: %w", ref.RuntimeID, ports.ErrConflict, err)
	case err != nil:
		return true, transient("take spec.imageRegistryCache of runtime "+ref.RuntimeID+" over from the previous manager", err)
	}
	return true, nil
}
