// Package archtest holds what the dependency-rule tests share: the import graph of a module's packages as `go list`
// reports it, and the search for an import chain that reaches a forbidden package.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"testing"
)

// Package is the part of `go list -json` output the checks need.
type Package struct {
	ImportPath string
	Imports    []string
}

// List runs `go list -deps` on pattern in the test's working directory and returns every package with its direct
// (non-test) imports.
func List(t *testing.T, pattern string) []Package {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", pattern)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []Package
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// Chain returns the first import chain from the package from (not included) to a package forbidden says is
// forbidden, following only packages follow allows; nil when there is none.
func Chain(graph map[string][]string, from string, forbidden, follow func(string) bool) []string {
	return chain(graph, from, forbidden, follow, map[string]bool{})
}

func chain(graph map[string][]string, from string, forbidden, follow func(string) bool, seen map[string]bool) []string {
	for _, imp := range graph[from] {
		if forbidden(imp) {
			return []string{imp}
		}
		if seen[imp] || !follow(imp) {
			continue
		}
		seen[imp] = true
		if rest := chain(graph, imp, forbidden, follow, seen); rest != nil {
			return append([]string{imp}, rest...)
		}
	}
	return nil
}

// Graph maps each package to its imports.
func Graph(pkgs []Package) map[string][]string {
	g := make(map[string][]string, len(pkgs))
	for _, p := range pkgs {
		g[p.ImportPath] = p.Imports
	}
	return g
}
