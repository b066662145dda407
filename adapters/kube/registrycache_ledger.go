package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// LabelRegistryCacheLedger marks the KCP ConfigMaps that record a runtime's garden copies of registry credentials.
const LabelRegistryCacheLedger = "infrastructuremanager.kyma-project.io/registry-cache-copies"

// RegistryCacheLedgerName is the ConfigMap (in the Runtime's namespace) recording the garden copies of runtimeID.
func RegistryCacheLedgerName(runtimeID string) string { return "kim-registry-cache-" + runtimeID }

// RegistryCacheLedger implements ports.RegistryCacheLedger with one ConfigMap per runtime in the KCP: data keys
// are the copies' names, values the shoot each was made for. It is not owned by the Runtime: it outlives it until
// the copies of a deleted runtime are collected (after its shoot is gone), and then goes itself.
type RegistryCacheLedger struct {
	// Cached reads the ConfigMaps from the manager's cache (they carry the operator's managed-by label) for
	// Copies with ReadCached; nil: from Live. Live reads them from the API server.
	Cached, Live client.Reader
	Writer       client.Writer
}

var _ ports.RegistryCacheLedger = (*RegistryCacheLedger)(nil)

// get reads the runtime's record (nil when there is none): from the cache for ReadCached when there is one, else
// from the API server.
func (l *RegistryCacheLedger) get(ctx context.Context, ref ports.RuntimeRef, mode ports.ReadMode) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	r := l.Live
	if mode == ports.ReadCached && l.Cached != nil {
		r = l.Cached
	}
	err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: RegistryCacheLedgerName(ref.RuntimeID)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, transient("get the registry credential copies of runtime "+ref.RuntimeID, err)
	}
	if cm.Labels[wire.LabelManagedBy] != wire.ManagedByValue || cm.Labels[imv1.LabelRuntimeID] != ref.RuntimeID {
		return nil, fmt.Errorf("ConfigMap %s/%s is not the operator's record of registry credential copies (labels)", cm.Namespace, cm.Name)
	}
	return cm, nil
}

// Copies implements ports.RegistryCacheLedger.
func (l *RegistryCacheLedger) Copies(ctx context.Context, ref ports.RuntimeRef, mode ports.ReadMode) ([]registrycache.GardenSecret, error) {
	cm, err := l.get(ctx, ref, mode)
	if cm == nil || err != nil {
		return nil, err
	}
	out := make([]registrycache.GardenSecret, 0, len(cm.Data))
	for name, shootName := range cm.Data {
		if strings.HasPrefix(name, registrycache.SecretPrefix) {
			out = append(out, registrycache.GardenSecret{Name: name, RuntimeID: ref.RuntimeID, ShootName: shootName})
		}
	}
	slices.SortFunc(out, func(a, b registrycache.GardenSecret) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Record implements ports.RegistryCacheLedger: creates the ConfigMap, or merge-patches the names into it.
func (l *RegistryCacheLedger) Record(ctx context.Context, ref ports.RuntimeRef, copies []registrycache.GardenSecret) error {
	if len(copies) == 0 {
		return nil
	}
	data := map[string]string{}
	for _, c := range copies {
		data[c.Name] = c.ShootName
	}
	cm, err := l.get(ctx, ref, ports.ReadLive)
	if err != nil {
		return err
	}
	if cm == nil {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: RegistryCacheLedgerName(ref.RuntimeID),
			Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue, imv1.LabelRuntimeID: ref.RuntimeID, LabelRegistryCacheLedger: "true"}},
			Data: data}
		err := l.Writer.Create(ctx, cm)
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return transient("record registry credential copies of runtime "+ref.RuntimeID, err)
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: RegistryCacheLedgerName(ref.RuntimeID)}}
	}
	doc := map[string]any{"data": data}
	p, err := rawMergePatch(doc)
	if err != nil {
		return err
	}
	if err := l.Writer.Patch(ctx, cm, p); err != nil {
		return transient("record registry credential copies of runtime "+ref.RuntimeID, err)
	}
	return nil
}

// Forget implements ports.RegistryCacheLedger: merge-patches the names out and deletes a ConfigMap left empty
// (preconditioned on that empty version, so a name recorded meanwhile is never lost).
func (l *RegistryCacheLedger) Forget(ctx context.Context, ref ports.RuntimeRef, names []string) error {
	cm, err := l.get(ctx, ref, ports.ReadLive)
	if cm == nil || err != nil {
		return err
	}
	if len(names) > 0 {
		data := map[string]any{}
		for _, n := range names {
			data[n] = nil
		}
		p, err := rawMergePatch(map[string]any{"data": data})
		if err != nil {
			return err
		}
		if err := l.Writer.Patch(ctx, cm, p); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return transient("forget registry credential copies of runtime "+ref.RuntimeID, err)
		}
	}
	if len(cm.Data) > 0 {
		return nil
	}
	err = l.Writer.Delete(ctx, cm, client.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return transient("remove the empty record of registry credential copies of runtime "+ref.RuntimeID, err)
	}
	return nil
}

// Runtimes implements ports.RegistryCacheLedger: a metadata-only list of the records by their label.
func (l *RegistryCacheLedger) Runtimes(ctx context.Context, namespace string) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := l.Live.List(ctx, list, client.InNamespace(namespace),
		client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue, LabelRegistryCacheLedger: "true"}); err != nil {
		return nil, transient("list the records of registry credential copies", err)
	}
	var out []string
	for _, m := range list.Items {
		if id := m.Labels[imv1.LabelRuntimeID]; id != "" && m.Name == RegistryCacheLedgerName(id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}
