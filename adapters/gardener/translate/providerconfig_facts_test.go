package translate

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// providerConfigFact is one row of testdata/gardener-extensions/providerconfigs.json.
type providerConfigFact struct {
	Location   string `json:"location"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	TypeMeta   string `json:"typeMeta"`
	DecodedBy  string `json:"decodedBy"`
	Fields     []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	} `json:"fields"`
}

// unverifiedLocations have no public extension API to check against; their providerConfigs are only required to
// be JSON objects with apiVersion and kind. Every entry says why.
var unverifiedLocations = map[string]string{
	"infra/gdch": "the GDCH provider extension is not public",
	"cp/gdch":    "the GDCH provider extension is not public",
}

func loadProviderConfigFacts(t *testing.T) map[string]providerConfigFact {
	t.Helper()
	data, err := os.ReadFile("../testdata/gardener-extensions/providerconfigs.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []providerConfigFact
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]providerConfigFact, len(rows))
	for _, r := range rows {
		out[r.Location] = r
	}
	return out
}

// placedConfig is one providerConfig of a shoot with the facts location that describes it.
type placedConfig struct {
	where    string // path in the shoot, for messages
	location string
	raw      *runtime.RawExtension
}

// shootProviderConfigs lists every providerConfig a shoot carries: infrastructure, control plane, workers, their
// container runtimes, networking and extensions.
func shootProviderConfigs(s *gardencorev1beta1.Shoot) []placedConfig {
	p := s.Spec.Provider
	out := []placedConfig{
		{"spec.provider.infrastructureConfig", "infra/" + p.Type, p.InfrastructureConfig},
		{"spec.provider.controlPlaneConfig", "cp/" + p.Type, p.ControlPlaneConfig},
	}
	for _, w := range p.Workers {
		out = append(out, placedConfig{"spec.provider.workers[" + w.Name + "].providerConfig", "worker/" + p.Type, w.ProviderConfig})
		if w.CRI != nil {
			for _, cr := range w.CRI.ContainerRuntimes {
				out = append(out, placedConfig{"spec.provider.workers[" + w.Name + "].cri.containerRuntimes[" + cr.Type + "].providerConfig", "cri/" + cr.Type, cr.ProviderConfig})
			}
		}
	}
	if n := s.Spec.Networking; n != nil {
		out = append(out, placedConfig{"spec.networking.providerConfig", "network/" + ptr.Deref(n.Type, ""), n.ProviderConfig})
	}
	for _, e := range s.Spec.Extensions {
		out = append(out, placedConfig{"spec.extensions[" + e.Type + "].providerConfig", "ext/" + e.Type, e.ProviderConfig})
	}
	return out
}

// TestGoldenProviderConfigsMatchExtensionFacts checks every providerConfig of every golden shoot against what the
// extension that decodes it accepts (testdata/gardener-extensions): the registered apiVersion/kind, and no field
// path the extension's type does not have. The gardener-apiserver does not look inside providerConfigs; the
// extensions decode them later, most of them strictly, so a mistake here only shows on a real landscape.
func TestGoldenProviderConfigsMatchExtensionFacts(t *testing.T) {
	facts := loadProviderConfigFacts(t)
	shoots, err := LoadShoots("../testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, s := range shoots {
		for _, pc := range shootProviderConfigs(s) {
			if pc.raw == nil || len(pc.raw.Raw) == 0 {
				continue
			}
			checked++
			for _, problem := range checkProviderConfig(facts, pc.location, pc.raw.Raw) {
				t.Errorf("%s: %s (%s): %s", name, pc.where, pc.location, problem)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no providerConfig checked")
	}
	t.Logf("%d providerConfigs of %d golden shoots checked", checked, len(shoots))
}

// checkProviderConfig returns what the extension at location would object to in raw.
func checkProviderConfig(facts map[string]providerConfigFact, location string, raw []byte) []string {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	f, known := facts[location]
	if !known {
		if why, ok := unverifiedLocations[location]; ok {
			if obj["apiVersion"] == nil || obj["kind"] == nil {
				return []string{"unverified location (" + why + ") without apiVersion/kind"}
			}
			return nil
		}
		return []string{"no extension facts for this location: add them to testdata/gardener-extensions or do not send a providerConfig"}
	}
	var problems []string
	typeMeta := strings.Fields(f.TypeMeta)[0]
	switch typeMeta {
	case "n/a":
		return []string{"the extension reads no providerConfig here (" + f.DecodedBy + ")"}
	case "none":
		// plain JSON: apiVersion/kind are not part of the type and count as unknown fields below
	case "required":
		if obj["apiVersion"] != f.APIVersion || obj["kind"] != f.Kind {
			problems = append(problems, fmt.Sprintf("apiVersion/kind %v/%v, the extension requires %s/%s", obj["apiVersion"], obj["kind"], f.APIVersion, f.Kind))
		}
	default: // optional, unverified: when given, they must be the registered ones
		for key, want := range map[string]string{"apiVersion": f.APIVersion, "kind": f.Kind} {
			if v, ok := obj[key]; ok && v != want {
				problems = append(problems, fmt.Sprintf("%s %v, the extension registers %s", key, v, want))
			}
		}
	}
	types := map[string]string{}
	for _, fl := range f.Fields {
		types[fl.Path] = fl.Type
	}
	for key, v := range obj {
		if typeMeta != "none" && (key == "apiVersion" || key == "kind") {
			continue
		}
		problems = append(problems, checkField(types, key, v)...)
	}
	sort.Strings(problems)
	return problems
}

// checkField checks value v at path against the field types; it descends into objects and lists.
func checkField(types map[string]string, path string, v any) []string {
	typ, ok := types[path]
	if !ok {
		return []string{"unknown field " + path}
	}
	if !kindMatches(typ, v) {
		return []string{fmt.Sprintf("field %s is %T, the extension expects %s", path, v, typ)}
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if strings.HasPrefix(typ, "map of ") {
			for k, item := range x {
				if !kindMatches(strings.TrimPrefix(typ, "map of "), item) {
					out = append(out, fmt.Sprintf("field %s.%s is %T, the extension expects %s", path, k, item, strings.TrimPrefix(typ, "map of ")))
				}
			}
			return out
		}
		for k, item := range x {
			out = append(out, checkField(types, path+"."+k, item)...)
		}
	case []any:
		for _, item := range x {
			if typ == "array of object" {
				m, _ := item.(map[string]any)
				for k, fv := range m {
					out = append(out, checkField(types, path+"[]."+k, fv)...)
				}
			} else if !kindMatches(strings.TrimPrefix(typ, "array of "), item) {
				out = append(out, fmt.Sprintf("item of %s is %T, the extension expects %s", path, item, typ))
			}
		}
	}
	return out
}

// kindMatches reports whether a decoded JSON value fits a facts type.
func kindMatches(typ string, v any) bool {
	switch {
	case strings.HasPrefix(typ, "map of "), typ == "object":
		_, ok := v.(map[string]any)
		return ok
	case strings.HasPrefix(typ, "array of "):
		_, ok := v.([]any)
		return ok
	case typ == "boolean":
		_, ok := v.(bool)
		return ok
	case typ == "integer":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	case typ == "number":
		_, ok := v.(float64)
		return ok
	case strings.HasPrefix(typ, "quantity"):
		switch v.(type) {
		case string, float64:
			return true
		}
		return false
	default: // string, duration string
		_, ok := v.(string)
		return ok
	}
}

// TestProviderConfigFactsCheckFindsMistakes keeps the check honest: each known kind of mistake is reported.
func TestProviderConfigFactsCheckFindsMistakes(t *testing.T) {
	facts := loadProviderConfigFacts(t)
	cases := []struct {
		reason, location, raw string
		want                  string // substring of the one expected problem; "" for none
	}{
		{"the filter's old apiVersion", "ext/shoot-networking-filter",
			`{"apiVersion":"shoot-networking-filter.extensions.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":true}}`, "registers"},
		{"the filter's registered apiVersion", "ext/shoot-networking-filter",
			`{"apiVersion":"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":true}}`, ""},
		{"an unknown field deep down", "infra/aws", `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"zones":[{"name":"a","subnet":"x"}]}}`, "unknown field networks.zones[].subnet"},
		{"required typeMeta missing", "infra/aws", `{"networks":{}}`, "requires"},
		{"a wrong JSON kind", "ext/registry-cache", `{"caches":[{"upstream":"docker.io","volume":{"size":true}}]}`, "expects quantity"},
		{"a map value of the wrong kind", "cri/gvisor", `{"configFlags":{"net-raw":true}}`, "expects string"},
		{"acl has no typeMeta", "ext/acl", `{"apiVersion":"x/v1","kind":"K","rule":{"action":"ALLOW","type":"remote_ip","cidrs":["1.2.3.4/32"]}}`, "unknown field"},
		{"a providerConfig where none is read", "worker/alicloud", `{"apiVersion":"x","kind":"y"}`, "reads no providerConfig"},
		{"a location without facts", "ext/unheard-of", `{}`, "no extension facts"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := checkProviderConfig(facts, tc.location, []byte(tc.raw))
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("unexpected problems: %v", got)
				}
				return
			}
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("want a problem containing %q, got %v", tc.want, got)
			}
		})
	}
}
