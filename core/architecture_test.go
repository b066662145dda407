package core_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

// forbiddenPrefixes are the module path prefixes core/ must never reach, directly or transitively: the domain
// stays independent of Kubernetes and Gardener so it can be tested in milliseconds and moved between adapters.
var forbiddenPrefixes = []string{"k8s.io/", "sigs.k8s.io/", "github.com/gardener/"}

// goPackage is the part of `go list -json` output the check needs.
type goPackage = archtest.Package

// violation is a core package that imports (directly) a package which is, or leads to, a forbidden one.
type violation struct {
	corePackage string
	chain       []string
}

func (v violation) String() string {
	return v.corePackage + " -> " + strings.Join(v.chain, " -> ")
}

func isForbidden(importPath string) bool {
	for _, p := range forbiddenPrefixes {
		if strings.HasPrefix(importPath, p) {
			return true
		}
	}
	return false
}

// findViolations walks the import graph from every root package whose path starts with corePrefix and reports, per
// root, the first chain that reaches a forbidden package.
func findViolations(pkgs []goPackage, corePrefix string) []violation {
	graph := archtest.Graph(pkgs)
	var out []violation
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, corePrefix) {
			continue
		}
		if chain := archtest.Chain(graph, p.ImportPath, isForbidden, func(string) bool { return true }); chain != nil {
			out = append(out, violation{corePackage: p.ImportPath, chain: chain})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].corePackage < out[j].corePackage })
	return out
}

func TestFindViolationsOnSyntheticGraphs(t *testing.T) {
	const core = "example.com/kim/core/"
	cases := []struct {
		reason string
		pkgs   []goPackage
		want   []string
	}{
		{
			reason: "standard library and sibling core packages only is clean",
			pkgs: []goPackage{
				{ImportPath: core + "domain/shoot", Imports: []string{"net/netip", core + "ports"}},
				{ImportPath: core + "ports", Imports: []string{"context", "time"}},
			},
		},
		{
			reason: "a direct import of client-go is reported",
			pkgs: []goPackage{
				{ImportPath: core + "domain/shoot", Imports: []string{"k8s.io/client-go/kubernetes"}},
			},
			want: []string{core + "domain/shoot -> k8s.io/client-go/kubernetes"},
		},
		{
			reason: "a transitive import through a harmless-looking package is reported with its chain",
			pkgs: []goPackage{
				{ImportPath: core + "domain/kubeconfig", Imports: []string{"example.com/helpers"}},
				{ImportPath: "example.com/helpers", Imports: []string{"github.com/gardener/gardener/pkg/apis/core/v1beta1"}},
			},
			want: []string{core + "domain/kubeconfig -> example.com/helpers -> github.com/gardener/gardener/pkg/apis/core/v1beta1"},
		},
		{
			reason: "controller-runtime is forbidden as well",
			pkgs: []goPackage{
				{ImportPath: core + "ports", Imports: []string{"sigs.k8s.io/controller-runtime/pkg/client"}},
			},
			want: []string{core + "ports -> sigs.k8s.io/controller-runtime/pkg/client"},
		},
		{
			reason: "packages outside core may import Kubernetes",
			pkgs: []goPackage{
				{ImportPath: "example.com/kim/adapters/kube", Imports: []string{"k8s.io/api/core/v1"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			var got []string
			for _, v := range findViolations(tc.pkgs, core) {
				got = append(got, v.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s:\nwant %q\ngot  %q", tc.reason, tc.want, got)
			}
		})
	}
}

// TestCoreImportsNoKubernetesOrGardener applies the check to the real module.
func TestCoreImportsNoKubernetesOrGardener(t *testing.T) {
	pkgs := archtest.List(t, "./...")
	const core = "github.com/kyma-project/kim/core/"
	var roots int
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, core) {
			roots++
		}
	}
	if roots == 0 {
		t.Fatalf("go list found no package under %s: the check would prove nothing", core)
	}
	for _, v := range findViolations(pkgs, core) {
		t.Errorf("core must not depend on Kubernetes or Gardener: %s", v)
	}
}
