package controllers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

// The composition root (operator/app) builds every adapter; controllers receive ports. A controller that builds or
// imports an adapter couples itself to one implementation and escapes the fakes (and the contract suites): this
// test, like depguard's "controllers" rule, fails when one does, directly or through another package.

const (
	module      = "github.com/kyma-project/kim/"
	controllers = module + "operator/controllers"
	adapters    = module + "adapters/"
)

type goPackage = archtest.Package

// adapterChains returns, per controller package, the first import chain that reaches an adapter.
func adapterChains(pkgs []goPackage) []string {
	graph := archtest.Graph(pkgs)
	isAdapter := func(p string) bool { return strings.HasPrefix(p, adapters) }
	inModule := func(p string) bool { return strings.HasPrefix(p, module) }
	var out []string
	for _, p := range pkgs {
		if p.ImportPath != controllers && !strings.HasPrefix(p.ImportPath, controllers+"/") {
			continue
		}
		if chain := archtest.Chain(graph, p.ImportPath, isAdapter, inModule); chain != nil {
			out = append(out, p.ImportPath+" -> "+strings.Join(chain, " -> "))
		}
	}
	slices.Sort(out)
	return out
}

func TestAdapterChainsOnSyntheticGraphs(t *testing.T) {
	cases := []struct {
		reason string
		pkgs   []goPackage
		want   []string
	}{
		{reason: "ports and the skeleton only is clean", pkgs: []goPackage{
			{ImportPath: controllers + "/runtime", Imports: []string{module + "core/ports", controllers + "/skeleton"}},
			{ImportPath: controllers + "/skeleton", Imports: []string{"sigs.k8s.io/controller-runtime"}},
		}},
		{reason: "a direct adapter import is reported", pkgs: []goPackage{
			{ImportPath: controllers + "/runtime", Imports: []string{adapters + "gardener"}},
		}, want: []string{controllers + "/runtime -> " + adapters + "gardener"}},
		{reason: "an adapter reached through another package of the module is reported with its chain", pkgs: []goPackage{
			{ImportPath: controllers + "/gardenercluster", Imports: []string{module + "operator/helpers"}},
			{ImportPath: module + "operator/helpers", Imports: []string{adapters + "kube"}},
		}, want: []string{controllers + "/gardenercluster -> " + module + "operator/helpers -> " + adapters + "kube"}},
		{reason: "the composition root may import adapters", pkgs: []goPackage{
			{ImportPath: module + "operator/app", Imports: []string{adapters + "kube"}},
		}},
	}
	for _, tc := range cases {
		if got := adapterChains(tc.pkgs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\nwant %q\ngot  %q", tc.reason, tc.want, got)
		}
	}
}

// TestControllersImportNoAdapter applies the check to the controllers of the module (their non-test code).
func TestControllersImportNoAdapter(t *testing.T) {
	pkgs := archtest.List(t, "./...")
	n := 0
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, controllers+"/") {
			n++
		}
	}
	if n < 3 {
		t.Fatalf("go list found %d controller packages: the check would prove nothing", n)
	}
	for _, c := range adapterChains(pkgs) {
		t.Errorf("a controller imports an adapter (build it in operator/app and pass the port): %s", c)
	}
}
