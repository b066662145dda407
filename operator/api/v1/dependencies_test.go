package v1_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPublicAPIStaysLean guards what importers of this package inherit: other teams import it, so it may depend
// on apimachinery and Gardener's lean API module, never on clients, controller-runtime or the full Gardener module.
func TestPublicAPIStaysLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"sigs.k8s.io/controller-runtime",
		"k8s.io/client-go",
		"k8s.io/apiserver",
		"github.com/gardener/gardener/pkg/client",
		"github.com/gardener/gardener/pkg/utils",
		"github.com/prometheus/",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("operator/api/v1 depends on %s; keep the public API lean", dep)
			}
		}
		if strings.HasPrefix(dep, "github.com/gardener/") && !strings.HasPrefix(dep, "github.com/gardener/gardener/pkg/apis/") {
			t.Errorf("operator/api/v1 depends on %s; only Gardener's lean pkg/apis module is allowed", dep)
		}
	}
}
