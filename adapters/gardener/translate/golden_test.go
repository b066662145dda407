package translate

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

var update = flag.Bool("update", false, "rewrite the golden files in adapters/gardener/testdata/shoots and adapters/gardener/testdata/authentication")

// TestGoldenShoots turns every Runtime in testdata/runtimes (as KEB sends it) into a Shoot using the
// operator configuration testdata/config.yaml, and compares it with testdata/shoots/<name>.yaml.
// A Runtime that must be rejected has testdata/shoots/<name>.error instead. The structured
// authentication ConfigMap each shoot references is in testdata/authentication/<name>.yaml.
func TestGoldenShoots(t *testing.T) {
	files, err := filepath.Glob("../testdata/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden runtimes: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cr imv1.Runtime
			if err := yaml.UnmarshalStrict(data, &cr); err != nil {
				t.Fatalf("runtime is not in the CRD's shape: %v", err)
			}
			spec, err := shoot.Generate(mapping.Runtime(&cr), goldenshoots.Config(t, name))
			if err != nil {
				ve := shoot.AsValidationError(err)
				if ve == nil {
					t.Fatalf("untyped error: %v", err)
				}
				golden(t, "../testdata/shoots/"+name+".error", []byte(string(ve.Reason)+"\n"+ve.Field+": "+ve.Message+"\n"))
				return
			}
			s, err := ToShoot(spec)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "../testdata/shoots/"+name+".yaml", goldenshoots.ObjectYAML(t, s))
			if spec.Authentication != nil {
				cmData, err := AuthenticationConfigMapData(spec.Authentication)
				if err != nil {
					t.Fatal(err)
				}
				cm := &corev1.ConfigMap{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: spec.Authentication.ConfigMapName, Namespace: spec.Namespace},
					Data:       cmData,
				}
				golden(t, "../testdata/authentication/"+name+".yaml", goldenshoots.ObjectYAML(t, cm))
			}
		})
	}
}

// TestGoldenShootsLoad checks that every golden Shoot decodes strictly as a v1beta1 Shoot.
func TestGoldenShootsLoad(t *testing.T) {
	shoots, err := LoadShoots("../testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	runtimes, _ := filepath.Glob("../testdata/runtimes/*.yaml")
	errs, _ := filepath.Glob("../testdata/shoots/*.error")
	if len(shoots)+len(errs) != len(runtimes) {
		t.Errorf("%d shoots + %d errors for %d runtimes: stale golden files?", len(shoots), len(errs), len(runtimes))
	}
	for name, s := range shoots {
		if s.Name == "" || s.Namespace == "" || len(s.Spec.Provider.Workers) == 0 {
			t.Errorf("%s: incomplete shoot", name)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got), run go test ./adapters/gardener/... -update and review:\n%s", path, diff)
	}
}
