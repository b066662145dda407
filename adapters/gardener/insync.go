package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// InSync implements ports.Shoots. It compares what Apply would send with the shoot in the cache, so the decision
// costs no request. Gardener bumps the shoot generation for changes of its own (scheduling, maintenance), which
// is why generations are no evidence of drift; the values are. The structured-authentication ConfigMap is part of
// the answer (authConfigMapHolds); a shoot found in sync is not compared again while nothing the answer depends on
// changed (inSyncMemo), its ConfigMap's version included. The same holds for the record of such an answer a caller
// gives back (a.InSyncRecord, kept in the Runtime's status): a restarted process answers from it instead of
// comparing every shoot of the fleet once more, which was a third of a restart's CPU at 10,000 Runtimes.
func (c *Shoots) InSync(ctx context.Context, a ports.ShootApply) (ports.SyncCheck, error) {
	a.Spec.Namespace = c.Namespace
	// Read only: the comparison encodes it, and the desired shoot is computed from a copy (translate.ApplySpec).
	current, err := c.whole(ctx, a.Spec.Name, true)
	if err != nil || current == nil || current.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
		c.inSync.forget(a.Spec.Name)
		return ports.SyncCheck{}, err
	}
	cm, err := c.authConfigMap(ctx, a)
	if err != nil {
		return ports.SyncCheck{}, err
	}
	key, keyed := inSyncKeyOf(a, current, cm)
	if keyed && (c.inSync.holds(a.Spec.Name, key) || (a.InSyncRecord != "" && a.InSyncRecord == key.record())) {
		c.inSync.remember(a.Spec.Name, key)
		return ports.SyncCheck{InSync: true, Record: key.record()}, nil
	}
	same, err := c.compare(a, current)
	if !same || err != nil || !authConfigMapHolds(a, cm, current) {
		return ports.SyncCheck{}, err
	}
	if !keyed {
		return ports.SyncCheck{InSync: true}, nil
	}
	c.inSync.remember(a.Spec.Name, key)
	return ports.SyncCheck{InSync: true, Record: key.record()}, nil
}

// compare reports whether current holds every value of what Apply would send for a.
func (c *Shoots) compare(a ports.ShootApply, current *gardencorev1beta1.Shoot) (bool, error) {
	c.inSync.count()
	desired, err := c.desired(a, current)
	if err != nil {
		return false, nil //nolint:nilerr // not in sync: Apply reports the rejection with its reason
	}
	want, err := toApplyObject(desired)
	if err != nil {
		return false, fmt.Errorf("compare shoot %s: %w", a.Spec.Name, err)
	}
	have, err := toJSONMap(current)
	if err != nil {
		return false, fmt.Errorf("compare shoot %s: %w", a.Spec.Name, err)
	}
	return len(current.Spec.Provider.Workers) == len(desired.Spec.Provider.Workers) && len(shootDifferences(want.Object, have)) == 0, nil
}

// authConfigMap reads the structured-authentication ConfigMap a writes from the cache: nil when a has no
// authentication or the ConfigMap does not exist.
func (c *Shoots) authConfigMap(ctx context.Context, a ports.ShootApply) (*corev1.ConfigMap, error) {
	auth := a.Spec.Authentication
	if auth == nil {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: auth.ConfigMapName}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.record("get", classify("get authentication ConfigMap of shoot "+a.Spec.Name, err))
	}
	return cm, nil
}

// authConfigMapHolds reports whether the structured-authentication ConfigMap (cm, nil: missing) holds what Apply
// writes for a: it decides which identity providers the cluster trusts, so a changed one is drift like a changed
// shoot field.
func authConfigMapHolds(a ports.ShootApply, cm *corev1.ConfigMap, owner *gardencorev1beta1.Shoot) bool {
	auth := a.Spec.Authentication
	if auth == nil {
		return true
	}
	if cm == nil {
		return false
	}
	want, err := translate.AuthenticationConfigMapData(auth)
	if err != nil {
		return false // not in sync: Apply reports the rejection with its reason
	}
	// Without the shoot as owner it would outlive the shoot (and an adopted one would stay the previous system's).
	if cm.Labels[wire.LabelManagedBy] != wire.ManagedByValue || !ownedByShoot(cm.OwnerReferences, owner) {
		return false
	}
	for k, v := range want {
		// By digest on the cached copy (CacheTransform keeps no data): equal digests are equal contents.
		if !configMapHolds(cm, k, v) {
			return false
		}
	}
	return true
}

// shootDifferences compares what is applied of a shoot: its metadata (labels, annotations) and its spec. The
// type fields are left out because objects read through a typed client do not carry them.
func shootDifferences(want, have map[string]any) []string {
	var out []string
	for _, k := range []string{"metadata", "spec"} {
		out = append(out, differences("."+k, want[k], have[k])...)
	}
	return out
}

func toJSONMap(s *gardencorev1beta1.Shoot) (map[string]any, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(raw, &out)
}

// Difference is one value where a shoot (or its ConfigMap) differs from what the operator would write: Path names
// the field (list items by their key, e.g. .spec.provider.workers[name=cpu-worker-0].maximum), Want is the value the
// operator writes, Have the value found (nil: absent).
type Difference struct {
	Path string `json:"path"`
	Want any    `json:"want,omitempty"`
	Have any    `json:"have,omitempty"`
}

func (d Difference) String() string { return fmt.Sprintf("%s: %v -> %v", d.Path, d.Want, d.Have) }

// differences lists, as paths, the values set in want that have does not hold. Fields only have sets are
// ignored: they are Gardener's defaults or other managers' values. A list whose wanted items all carry a "name"
// (or else a "type") is matched by that key and may hold more items, as server-side apply merges Gardener's keyed
// lists; any other list must match item by item. A "major.minor" Kubernetes version completed by Gardener to a
// patch version is no difference.
func differences(path string, want, have any) []string {
	var out []string
	for _, d := range diffValues(path, want, have) {
		out = append(out, d.String())
	}
	return out
}

// diffValues is differences with structured results.
func diffValues(path string, want, have any) []Difference {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return []Difference{{path, want, have}}
		}
		var out []Difference
		for k, wv := range w {
			out = append(out, diffValues(path+"."+k, wv, h[k])...)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
		return out
	case []any:
		h, ok := have.([]any)
		if !ok {
			return []Difference{{path, want, have}}
		}
		if key := listKey(w); key != "" {
			return keyedDifferences(path, w, h, key)
		}
		if len(h) != len(w) {
			return []Difference{{path, want, have}}
		}
		var out []Difference
		for i := range w {
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), w[i], h[i])...)
		}
		return out
	}
	if reflect.DeepEqual(want, have) || completedVersion(path, want, have) {
		return nil
	}
	return []Difference{{path, want, have}}
}

func completedVersion(path string, want, have any) bool {
	v, ok := want.(string)
	w, ok2 := have.(string)
	return ok && ok2 && strings.HasSuffix(path, "kubernetes.version") && strings.Count(v, ".") == 1 && strings.HasPrefix(w, v+".")
}

// listKey returns the field identifying the items of a keyed list (every item is an object with that field as a
// string), or "" when the list is not keyed.
func listKey(items []any) string {
	for _, key := range []string{"name", "type"} {
		keyed := len(items) > 0
		for _, it := range items {
			m, _ := it.(map[string]any)
			if _, isString := m[key].(string); !isString {
				keyed = false
				break
			}
		}
		if keyed {
			return key
		}
	}
	return ""
}

func keyedDifferences(path string, want, have []any, key string) []Difference {
	byKey := make(map[string]any, len(have))
	for _, it := range have {
		if m, ok := it.(map[string]any); ok {
			if k, ok := m[key].(string); ok {
				byKey[k] = m
			}
		}
	}
	var out []Difference
	for _, it := range want {
		k, _ := it.(map[string]any)[key].(string) // listKey checked every wanted item
		out = append(out, diffValues(fmt.Sprintf("%s[%s=%s]", path, key, k), it, byKey[k])...)
	}
	return out
}
