package translate

import (
	"encoding/json"
	"reflect"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// typeMetaOptional are the extensions that take a missing apiVersion/kind of their providerConfig from their Go
// type (the extensions' facts, testdata/gardener-extensions/providerconfigs.json): a config without them says the
// same as one with the registered ones.
var typeMetaOptional = []string{shoot.ExtensionNetworkingFilter, shoot.ExtensionRegistryCache, shoot.ExtensionDNS, shoot.ExtensionCert}

// mergeExtensions lays the generated extensions over the shoot's, in the shoot's order: an extension of a type
// that is generated takes the generated one's place (unless the current one already says the same: its bytes
// stay, so another writer's encoding is not a change), one of the kept types stays as it is, one the operator owns
// and no longer generates goes (unless it is switched off), every other one stays. A generated extension the
// shoot lacks goes to its place in the generated order (see generatedPlace).
func mergeExtensions(current, generated []gardencorev1beta1.Extension, kept []string) []gardencorev1beta1.Extension {
	var out []gardencorev1beta1.Extension
	placed := map[string]bool{}
	for _, c := range current {
		if i := slices.IndexFunc(generated, func(g gardencorev1beta1.Extension) bool { return g.Type == c.Type }); i >= 0 {
			if !placed[c.Type] {
				if sameExtension(c, generated[i]) {
					out = append(out, *c.DeepCopy())
				} else {
					out = append(out, generated[i])
				}
			}
			placed[c.Type] = true
			continue
		}
		// One the operator owns and no longer generates goes, unless it is kept or already switched off (the previous
		// manager left "disabled: true" where it switched one off; removing it would change nothing but the spec).
		if isOwnedExtension(c.Type) && !slices.Contains(kept, c.Type) && !ptr.Deref(c.Disabled, false) {
			continue
		}
		out = append(out, *c.DeepCopy())
	}
	for i, g := range generated {
		if !placed[g.Type] {
			out = slices.Insert(out, generatedPlace(out, generated, i), g)
			placed[g.Type] = true
		}
	}
	return out
}

// generatedPlace is where generated[i], which the shoot lacks, goes in out: right after the last extension whose
// type is generated before it, else right before the first one generated after it, else at the end. One someone
// removed so comes back where it was, and the shoot is again exactly what was generated.
func generatedPlace(out, generated []gardencorev1beta1.Extension, i int) int {
	among := func(list []gardencorev1beta1.Extension, typ string) bool {
		return slices.ContainsFunc(list, func(g gardencorev1beta1.Extension) bool { return g.Type == typ })
	}
	for j := len(out) - 1; j >= 0; j-- {
		if among(generated[:i], out[j].Type) {
			return j + 1
		}
	}
	for j := range out {
		if among(generated[i+1:], out[j].Type) {
			return j
		}
	}
	return len(out)
}

// keptExtensionTypes are the types generation asks to leave as the shoot has them.
func keptExtensionTypes(in []shoot.Extension) []string {
	var out []string
	for _, e := range in {
		if e.KeepCurrent {
			out = append(out, e.Type)
		}
	}
	return out
}

// sameExtension reports whether current already says what generated says: the same enablement and the same
// providerConfig as a JSON value, where null members count as absent and a missing apiVersion/kind as the one
// the extension registers (for the extensions that default them).
func sameExtension(current, generated gardencorev1beta1.Extension) bool {
	if ptr.Deref(current.Disabled, false) != ptr.Deref(generated.Disabled, false) {
		return false
	}
	c, ok := configValue(current.ProviderConfig)
	if !ok {
		return false
	}
	g, ok := configValue(generated.ProviderConfig)
	if !ok {
		return false
	}
	if slices.Contains(typeMetaOptional, generated.Type) {
		for _, key := range []string{"apiVersion", "kind"} {
			if _, has := c[key]; !has {
				delete(g, key)
			}
		}
	}
	return reflect.DeepEqual(c, g)
}

// configValue is a providerConfig as a JSON object without null members; no config is the empty object.
func configValue(raw *runtime.RawExtension) (map[string]any, bool) {
	if raw == nil || len(raw.Raw) == 0 {
		return map[string]any{}, true
	}
	var v map[string]any
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return nil, false
	}
	dropNulls(v)
	return v, true
}

func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			if item == nil {
				delete(x, k)
				continue
			}
			dropNulls(item)
		}
	case []any:
		for _, item := range x {
			dropNulls(item)
		}
	}
}
