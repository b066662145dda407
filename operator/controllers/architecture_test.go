package controllers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The composition root (operator/app) builds every adapter; controllers receive ports. A controller that builds or
// imports an adapter couples itself to one implementation and escapes the fakes (and the contract suites): this
// test, like depguard's "controllers" rule, fails when one does, directly or through another package.

const (
	module      = "github.com/kyma-project/kim/"
	controllers = module + "operator/controllers"
	adapters    = module + "adapters/"
)

type goPackage struct {
	ImportPath string
	Imports    []string
}

// adapterChains returns, per controller package, the first import chain that reaches an adapter.
func adapterChains(pkgs []goPackage) []string {
	graph := map[string][]string{}
	for _, p := range pkgs {
		graph[p.ImportPath] = p.Imports
	}
	var out []string
	for _, p := range pkgs {
		if p.ImportPath != controllers && !strings.HasPrefix(p.ImportPath, controllers+"/") {
			continue
		}
		if chain := reach(graph, p.ImportPath, map[string]bool{}); chain != nil {
			out = append(out, p.ImportPath+" -> "+strings.Join(chain, " -> "))
		}
	}
	slices.Sort(out)
	return out
}

func reach(graph map[string][]string, from string, seen map[string]bool) []string {
	for _, imp := range graph[from] {
		if strings.HasPrefix(imp, adapters) {
			return []string{imp}
		}
		if seen[imp] || !strings.HasPrefix(imp, module) {
			continue
		}
		seen[imp] = true
		if rest := reach(graph, imp, seen); rest != nil {
			return append([]string{imp}, rest...)
		}
	}
	return nil
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
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
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
