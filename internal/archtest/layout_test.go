package archtest_test

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

const module = "github.com/kyma-project/kim/"

// testFloor is the test harness: the test environment, the sandbox, the end-to-end tests and the benchmarks.
func testFloor(p string) bool { return strings.HasPrefix(p, module+"test/") }

// productFloor is what ships: the operator's packages and the libraries it imports.
func productFloor(p string) bool {
	return strings.HasPrefix(p, module+"operator/") || strings.HasPrefix(p, module+"internal/") ||
		strings.HasPrefix(p, module+"core/") || strings.HasPrefix(p, module+"adapters/")
}

// TestNothingThatShipsImportsTheTestFloor: no package under operator/, internal/, core/ or adapters/ imports test/
// (tests of those packages may: `go list` reports non-test imports only).
func TestNothingThatShipsImportsTheTestFloor(t *testing.T) {
	pkgs := archtest.List(t, module+"...")
	graph := archtest.Graph(pkgs)
	checked := 0
	for _, p := range pkgs {
		if !productFloor(p.ImportPath) {
			continue
		}
		checked++
		if c := archtest.Chain(graph, p.ImportPath, testFloor, productFloor); c != nil {
			t.Errorf("%s imports the test floor: %s -> %s", p.ImportPath, p.ImportPath, strings.Join(c, " -> "))
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: the check would prove nothing", checked)
	}
}

// TestBinariesCarryNoTestEnvironment: the manager and the kim CLI that SREs run link neither the test floor nor
// controller-runtime's envtest (the sandbox is its own command, test/cmd/sandbox).
func TestBinariesCarryNoTestEnvironment(t *testing.T) {
	forbidden := func(p string) bool {
		return testFloor(p) || strings.HasPrefix(p, "sigs.k8s.io/controller-runtime/pkg/envtest")
	}
	for _, bin := range []string{"operator/cmd/manager", "operator/cmd/kim", "operator/cmd/probe"} {
		pkgs := archtest.List(t, module+bin)
		if len(pkgs) < 50 {
			t.Fatalf("%s: go list found %d packages: the check would prove nothing", bin, len(pkgs))
		}
		for _, p := range pkgs {
			if forbidden(p.ImportPath) {
				t.Errorf("%s links %s", bin, p.ImportPath)
			}
		}
	}
	// The check can fail: the sandbox command does link the test environment.
	found := false
	for _, p := range archtest.List(t, module+"test/cmd/sandbox") {
		found = found || forbidden(p.ImportPath)
	}
	if !found {
		t.Error("test/cmd/sandbox links no test package: the check above would prove nothing")
	}
}

// TestTheRuleFindsAChain: a synthetic graph where a product package reaches the test floor through another.
// TestTheVersionStampIsALeaf: the release test (operator/release) builds a stub that imports package version for
// every platform of the release, so a fresh machine compiles what version imports four times; a metrics library
// there cost about 50 s of CPU per platform. The build-info gauge lives in operator/version/metric.
func TestTheVersionStampIsALeaf(t *testing.T) {
	pkgs := archtest.List(t, module+"operator/version")
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: the check would prove nothing", len(pkgs))
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, "github.com/prometheus/") || strings.HasPrefix(p.ImportPath, "k8s.io/") {
			t.Errorf("operator/version links %s", p.ImportPath)
		}
	}
}

func TestTheRuleFindsAChain(t *testing.T) {
	graph := map[string][]string{
		module + "operator/app":    {module + "internal/helper"},
		module + "internal/helper": {module + "test/testenv"},
	}
	if c := archtest.Chain(graph, module+"operator/app", testFloor, productFloor); len(c) != 2 {
		t.Errorf("chain %v, want internal/helper -> test/testenv", c)
	}
}
