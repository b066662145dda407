// Package archtest holds what the dependency-rule tests share: the import graph of a module's packages as `go list`
// reports it, the search for an import chain that reaches a forbidden package, and the sources of a package for
// checks of its declarations.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Sources returns the non-test Go files of the directory dir (file path -> source), for checks that read the code
// itself rather than the import graph.
func Sources(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		files[p] = string(b)
	}
	return files
}
