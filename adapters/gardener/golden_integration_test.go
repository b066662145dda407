package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
)

// TestGoldenShootsIntegration creates every golden Shoot (testdata/shoots) together with the structured
// authentication ConfigMap it references (testdata/authentication) in the real gardener-apiserver of
// garden-in-a-box, seeded with the default sandbox catalogue and nothing else. Acceptance is admission:
// every shoot must pass Gardener's defaulting, validation and admission plugins (cloud profile, regions,
// zones, machine and volume types, credentials binding, registered extension types, referenced Secrets
// and ConfigMaps, exposure class, access restrictions, tolerations, DNS). Nothing waits for the
// (simulated) gardenlet. Beyond acceptance, the stored shoot must keep every field the generator set:
// Gardener may only add defaults and complete a "major.minor" Kubernetes version to the newest patch of
// the cloud profile (a silently dropped or rewritten field would make every update fight Gardener).
//
// The test uses catalogue.Default() unmodified on purpose: it is what the sandbox command (`test/cmd/sandbox`) offers, so a shoot
// that needs something the catalogue lacks is a gap the sandbox's real Runtimes would hit as well.
func TestGoldenShootsIntegration(t *testing.T) {
	shoots, err := translate.LoadShoots("testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	if len(shoots) == 0 {
		t.Fatal("no golden shoots in testdata/shoots")
	}
	env := GardenBox(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	names := make([]string, 0, len(shoots))
	for name := range shoots {
		names = append(names, name)
	}
	sort.Strings(names)
	begin := time.Now()
	var accepted int
	// Subtests run in sequence: the whole batch takes well under a second on the apiserver, and
	// sequential output reads better when a rule is rejected.
	for _, name := range names {
		s := shoots[name]
		ok := t.Run(name, func(t *testing.T) {
			if want := env.Catalogue.ProjectNamespace(); s.Namespace != want {
				t.Fatalf("shoot namespace %s, but the sandbox project lives in %s: testdata/config.yaml and "+
					"catalogue.Default() must name the same Gardener project", s.Namespace, want)
			}
			if err := createAuthenticationConfigMap(ctx, env.GardenClient, name); err != nil {
				t.Fatal(err)
			}
			stored := s.DeepCopy()
			if err := env.GardenClient.Create(ctx, stored); err != nil {
				t.Fatalf("gardener-apiserver rejects golden shoot %s: %v", name, err)
			}
			for _, d := range changedFields(t, "spec", s.Spec, stored.Spec) {
				t.Errorf("gardener-apiserver changed a field the generator set: %s", d)
			}
		})
		if ok {
			accepted++
		}
	}
	t.Logf("%d/%d golden shoots accepted by the gardener-apiserver in %v", accepted, len(names),
		time.Since(begin).Round(time.Millisecond))
}

// changedFields lists the fields set in sent whose value differs in stored (fields only stored has are
// Gardener's defaults and are ignored). A Kubernetes version "1.33" completed to "1.33.5" is not a change.
func changedFields(t *testing.T, path string, sent, stored any) []string {
	t.Helper()
	var a, b any
	for _, x := range []struct {
		in  any
		out *any
	}{{sent, &a}, {stored, &b}} {
		data, err := json.Marshal(x.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, x.out); err != nil {
			t.Fatal(err)
		}
	}
	return differences(path, a, b)
}

// createAuthenticationConfigMap creates testdata/authentication/<name>.yaml when it exists: the Shoot's
// structuredAuthentication reference must resolve at admission time.
func createAuthenticationConfigMap(ctx context.Context, c client.Client, name string) error {
	data, err := os.ReadFile(filepath.Join("testdata", "authentication", name+".yaml"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read authentication ConfigMap of %s: %w", name, err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		return fmt.Errorf("decode authentication ConfigMap of %s: %w", name, err)
	}
	if err := c.Create(ctx, &cm); err != nil {
		return fmt.Errorf("create authentication ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}

// TestDifferences checks the comparison that judges whether Gardener kept what the generator set, and whether a
// shoot is in sync with the desired spec.
func TestDifferences(t *testing.T) {
	for _, tc := range []struct {
		reason        string
		sent, stored  string
		wantDifferent int
	}{
		{"defaults added by Gardener are ignored", `{"a":1}`, `{"a":1,"b":2}`, 0},
		{"a dropped field is a change", `{"a":1,"b":{"c":"x"}}`, `{"a":1}`, 1},
		{"a rewritten list item is a change", `{"z":["a","b"]}`, `{"z":["b","a"]}`, 2},
		{"a shortened list is a change", `{"z":["a","b"]}`, `{"z":["a"]}`, 1},
		{"minor version completed to a patch is no change", `{"kubernetes":{"version":"1.33"}}`, `{"kubernetes":{"version":"1.33.5"}}`, 0},
		{"a different minor is a change", `{"kubernetes":{"version":"1.33"}}`, `{"kubernetes":{"version":"1.34.1"}}`, 1},
		{"a changed patch is a change", `{"kubernetes":{"version":"1.33.4"}}`, `{"kubernetes":{"version":"1.33.5"}}`, 1},
		{"a keyed list may hold more items", `{"e":[{"type":"a"}]}`, `{"e":[{"type":"b"},{"type":"a","x":1}]}`, 0},
		{"a keyed item is matched by key, not position", `{"w":[{"name":"a","max":3},{"name":"b","max":1}]}`, `{"w":[{"name":"b","max":1},{"name":"a","max":3}]}`, 0},
		{"a changed value in a keyed item is a change", `{"w":[{"name":"a","max":3}]}`, `{"w":[{"name":"a","max":4}]}`, 1},
		{"a missing keyed item is a change", `{"w":[{"name":"a"},{"name":"b"}]}`, `{"w":[{"name":"a"}]}`, 1},
		{"a list of objects without keys must match by position", `{"t":[{"k":"a"},{"k":"b"}]}`, `{"t":[{"k":"b"},{"k":"a"}]}`, 2},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var sent, stored any
			if err := json.Unmarshal([]byte(tc.sent), &sent); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.stored), &stored); err != nil {
				t.Fatal(err)
			}
			if got := differences("spec", sent, stored); len(got) != tc.wantDifferent {
				t.Errorf("got %d changes %v, want %d", len(got), got, tc.wantDifferent)
			}
		})
	}
}
