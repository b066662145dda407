package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// markKeys are the labels and annotations adoption itself writes (the operator's marks): they differ on every shoot
// of another system and say nothing about the cluster.
var markKeys = map[string]bool{
	wire.LabelManagedBy: true, shoot.AnnotationRuntimeID: true, shoot.AnnotationRuntimeGeneration: true,
	AnnotationSpecHash: true, AnnotationPlan: true, AnnotationRuntimeNamespace: true,
}

// AdoptionDifferences reports what the operator's first apply after adopting live would change, computed as the
// operator computes it (the update rules applied to live, shoot.GenerateUpdate's spec a): every value of the
// metadata (except the operator's marks) and spec the apply sets and live holds differently or not at all, and
// every difference of the structured authentication ConfigMap (liveAuth: its data, nil when absent), whose content
// is replaced as a whole. Values only live has are not differences: an apply leaves other managers' fields alone.
func AdoptionDifferences(live *gardencorev1beta1.Shoot, liveAuth map[string]string, a ports.ShootApply) ([]Difference, error) {
	c := &Shoots{Namespace: live.Namespace}
	a.Spec.Namespace = live.Namespace
	desired, err := c.desired(a, live)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", live.Name, err)
	}
	want, err := toApplyObject(desired)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", live.Name, err)
	}
	have, err := toJSONMap(live)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", live.Name, err)
	}
	var out []Difference
	for _, d := range diffValues("", map[string]any{"metadata": want.Object["metadata"], "spec": want.Object["spec"]},
		map[string]any{"metadata": have["metadata"], "spec": have["spec"]}) {
		if !isMark(d.Path) {
			out = append(out, d)
		}
	}
	authDiffs, err := authenticationDifferences(a.Spec, liveAuth)
	if err != nil {
		return nil, fmt.Errorf("shoot %s: %w", live.Name, err)
	}
	return append(out, authDiffs...), nil
}

func isMark(path string) bool {
	for _, prefix := range []string{".metadata.labels.", ".metadata.annotations."} {
		if key, ok := strings.CutPrefix(path, prefix); ok && markKeys[key] {
			return true
		}
	}
	return false
}

// AuthenticationPath is the path of differences in the structured authentication ConfigMap.
const AuthenticationPath = ".authenticationConfigMap"

// authenticationDifferences compares the configuration the operator writes with the live one, as documents (the
// previous system may have rendered it differently): a JWT authenticator added, removed or changed is a difference.
func authenticationDifferences(spec shoot.Spec, liveAuth map[string]string) ([]Difference, error) {
	want, err := translate.AuthenticationConfigMapData(spec.Authentication)
	if err != nil {
		return nil, err
	}
	if want == nil {
		return nil, nil // nothing is written; a ConfigMap the shoot no longer references stays as it is
	}
	path := AuthenticationPath
	if liveAuth == nil {
		return []Difference{{Path: path, Want: "ConfigMap " + spec.Authentication.ConfigMapName, Have: nil}}, nil
	}
	var w, h any
	if err := yaml.Unmarshal([]byte(want[translate.AuthenticationConfigKey]), &w); err != nil {
		return nil, fmt.Errorf("decode the generated authentication configuration: %w", err)
	}
	if err := yaml.Unmarshal([]byte(liveAuth[translate.AuthenticationConfigKey]), &h); err != nil {
		return []Difference{{Path: path, Want: "a valid configuration", Have: "unreadable: " + err.Error()}}, nil
	}
	if reflect.DeepEqual(w, h) {
		return nil, nil
	}
	return []Difference{{Path: path + ".data." + translate.AuthenticationConfigKey, Want: w, Have: h}}, nil
}

// DryRunAdoption asks the gardener-apiserver what the operator's first write after adopting live would store: the
// same write the operator sends (Apply's: only the marks when live already holds every value, otherwise the
// server-side apply), in dry-run mode (Gardener's defaulting, validation and admission run, nothing is persisted).
// It lists every field of the spec and of the labels and annotations (except the operator's marks) whose stored value
// would differ from live, in both directions, and a new generation (".metadata.generation": Gardener would reconcile
// the cluster). It needs the patch permission on shoots. A shoot that still names a SecretBinding cannot be checked
// this way (the apply names the CredentialsBinding, and Gardener refuses a shoot naming both before the operator's
// switch): the write is refused then (ErrShootRejected).
//
// The write is pinned to live's resourceVersion, so the differences are those of exactly that version; when Gardener
// wrote the shoot meanwhile (its status, several times during a reconcile) the shoot is read again and the dry run
// repeated on the fresh version.
func (c *Shoots) DryRunAdoption(ctx context.Context, live *gardencorev1beta1.Shoot, a ports.ShootApply) ([]Difference, error) {
	var out []Difference
	err := retry.OnError(conflictBackoff, func(err error) bool { return errors.Is(err, ports.ErrConflict) }, func() error {
		var err error
		out, err = c.dryRunAdoption(ctx, live, a)
		if errors.Is(err, ports.ErrConflict) {
			fresh, rerr := c.read(ctx, live.Name, ports.ReadLive)
			if rerr != nil || fresh == nil {
				return errors.Join(err, rerr)
			}
			live = fresh
		}
		return err
	})
	return out, err
}

func (c *Shoots) dryRunAdoption(ctx context.Context, live *gardencorev1beta1.Shoot, a ports.ShootApply) ([]Difference, error) {
	a.Spec.Namespace = c.Namespace
	desired, err := c.desired(a, live)
	if err != nil {
		return nil, fmt.Errorf("dry run for shoot %s: %w", live.Name, err)
	}
	marksOnly, err := adoptedInSync(live, desired)
	if err != nil {
		return nil, fmt.Errorf("dry run for shoot %s: %w", live.Name, err)
	}
	var stored any
	if marksOnly {
		raw, err := marksPatch(live, desired)
		if err != nil {
			return nil, err
		}
		s := live.DeepCopy()
		err = c.Client.Patch(ctx, s, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldManager), client.DryRunAll)
		if err := classify("dry-run patch of shoot "+live.Name, err); err != nil {
			return nil, err
		}
		stored = s
	} else {
		u, err := toApplyObject(desired)
		if err != nil {
			return nil, fmt.Errorf("dry run for shoot %s: %w", live.Name, err)
		}
		u.SetUID(live.UID)
		u.SetResourceVersion(live.ResourceVersion)
		err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll)
		if err := classify("dry-run apply of shoot "+live.Name, err); err != nil {
			return nil, err
		}
		stored = u.Object
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	result := map[string]any{}
	if err := json.Unmarshal(raw, &result); err != nil {
		return nil, err
	}
	have, err := toJSONMap(live)
	if err != nil {
		return nil, err
	}
	var out []Difference
	for _, part := range []string{"spec", "metadata.labels", "metadata.annotations"} {
		for _, d := range symmetricDifferences("."+part, lookup(result, part), lookup(have, part)) {
			if !isMark(d.Path) {
				out = append(out, d)
			}
		}
	}
	if g, ok := lookup(result, "metadata.generation").(float64); ok && int64(g) != live.Generation {
		out = append(out, Difference{Path: ".metadata.generation", Want: int64(g), Have: live.Generation})
	}
	return out, nil
}

func lookup(m map[string]any, dotted string) any {
	var cur any = m
	for _, k := range strings.Split(dotted, ".") {
		next, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = next[k]
	}
	return cur
}

// symmetricDifferences lists every path where after differs from before: changed, added and removed values.
// Lists of objects keyed by name or type are matched by key; other lists by position.
func symmetricDifferences(path string, after, before any) []Difference {
	a, aok := after.(map[string]any)
	b, bok := before.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		var out []Difference
		for k := range keys {
			sep := "."
			if strings.HasPrefix(k, "[") {
				sep = "" // an item of a keyed list (byListKey)
			}
			out = append(out, symmetricDifferences(path+sep+k, a[k], b[k])...)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
		return out
	}
	al, alok := after.([]any)
	bl, blok := before.([]any)
	if alok && blok {
		key := listKey(append(append([]any{}, al...), bl...))
		if key == "" && len(al) == len(bl) {
			var out []Difference
			for i := range al {
				out = append(out, symmetricDifferences(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])...)
			}
			return out
		}
		if key != "" {
			return symmetricDifferences(path, byListKey(al, key), byListKey(bl, key))
		}
	}
	if reflect.DeepEqual(after, before) {
		return nil
	}
	return []Difference{{Path: path, Want: after, Have: before}}
}

// byListKey turns a keyed list into a map, so items are compared by key ("[name=x]").
func byListKey(items []any, key string) map[string]any {
	out := make(map[string]any, len(items))
	for _, it := range items {
		m := it.(map[string]any) // listKey checked every item
		out[fmt.Sprintf("[%s=%v]", key, m[key])] = m
	}
	return out
}
