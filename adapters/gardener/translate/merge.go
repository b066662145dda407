package translate

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// mergeRaw lays generated over current: objects merge key by key, lists of objects with a "name"
// merge entry by entry (current order kept, new entries appended), anything else is replaced.
// Fields only current has (VPC IDs, gateway endpoints set by operators, ...) survive.
func mergeRaw(current, generated *runtime.RawExtension) (*runtime.RawExtension, error) {
	if generated == nil {
		return current, nil
	}
	if current == nil || len(current.Raw) == 0 {
		return generated, nil
	}
	var cur, gen any
	if err := json.Unmarshal(current.Raw, &cur); err != nil {
		return nil, fmt.Errorf("decode current provider config: %w", err)
	}
	if err := json.Unmarshal(generated.Raw, &gen); err != nil {
		return nil, fmt.Errorf("decode generated provider config: %w", err)
	}
	b, err := json.Marshal(mergeValue(cur, gen))
	if err != nil {
		return nil, fmt.Errorf("encode merged provider config: %w", err)
	}
	return &runtime.RawExtension{Raw: b}, nil
}

func mergeValue(cur, gen any) any {
	switch g := gen.(type) {
	case map[string]any:
		c, ok := cur.(map[string]any)
		if !ok {
			return g
		}
		for k, v := range g {
			c[k] = mergeValue(c[k], v)
		}
		return c
	case []any:
		c, ok := cur.([]any)
		if !ok || !namedList(c) || !namedList(g) {
			return g
		}
		out := slices.Clone(c)
		for _, item := range g {
			name := nameOf(item)
			if i := slices.IndexFunc(out, func(x any) bool { return nameOf(x) == name }); i >= 0 {
				out[i] = mergeValue(out[i], item)
			} else {
				out = append(out, item)
			}
		}
		return out
	default:
		return gen
	}
}

func namedList(l []any) bool {
	for _, item := range l {
		if nameOf(item) == "" {
			return false
		}
	}
	return true
}

func nameOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok || m["name"] == nil {
		return ""
	}
	return fmt.Sprint(m["name"])
}

func isOwnedExtension(t string) bool { return slices.Contains(shoot.OwnedExtensionTypes, t) }

// upsert replaces the first element with the same key as item, or appends item.
func upsert[T any](list []T, item T, sameKey func(T) bool) []T {
	if i := slices.IndexFunc(list, sameKey); i >= 0 {
		list[i] = item
		return list
	}
	return append(list, item)
}

func mergeResources(current []gardencorev1beta1.NamedResourceReference, generated []shoot.ResourceRef) []gardencorev1beta1.NamedResourceReference {
	out := slices.Clone(current)
	for _, r := range generated {
		ref := gardencorev1beta1.NamedResourceReference{Name: r.Name, ResourceRef: autoscalingv1.CrossVersionObjectReference{
			APIVersion: r.APIVersion, Kind: r.Kind, Name: r.TargetName,
		}}
		out = upsert(out, ref, func(x gardencorev1beta1.NamedResourceReference) bool { return x.Name == r.Name })
	}
	return out
}

func mergeAccessRestrictions(current []gardencorev1beta1.AccessRestrictionWithOptions, generated []shoot.AccessRestriction) []gardencorev1beta1.AccessRestrictionWithOptions {
	out := slices.Clone(current)
	for _, r := range generated {
		ar := gardencorev1beta1.AccessRestrictionWithOptions{AccessRestriction: gardencorev1beta1.AccessRestriction{Name: r.Name}, Options: r.Options}
		out = upsert(out, ar, func(x gardencorev1beta1.AccessRestrictionWithOptions) bool { return x.Name == r.Name })
	}
	return out
}

func mergeTolerations(current []gardencorev1beta1.Toleration, generated []shoot.Toleration) []gardencorev1beta1.Toleration {
	out := slices.Clone(current)
	for _, t := range generated {
		tol := gardencorev1beta1.Toleration{Key: t.Key}
		if t.Value != "" {
			tol.Value = &t.Value
		}
		out = upsert(out, tol, func(x gardencorev1beta1.Toleration) bool { return x.Key == t.Key })
	}
	return out
}

// compareMinor compares the major.minor of version with major.minor.
func compareMinor(version string, major, minor int) int {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return -1
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(parts[1])
	switch {
	case ma != major:
		return ma - major
	default:
		return mi - minor
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
