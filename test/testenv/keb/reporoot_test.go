package keb

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepoRootIsFoundFromTheWorkingDirectory: a binary built with -trimpath (make test builds so) knows its files by
// module path only, so the root is found from the working directory: from a package directory it is the directory
// holding this file's package, and the API module's own go.mod below it is not taken for the root.
func TestRepoRootIsFoundFromTheWorkingDirectory(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := rootFrom(wd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "test", "testenv", "keb", "keb.go")); err != nil {
		t.Errorf("root %s does not hold this package: %v", root, err)
	}
	if got, err := rootFrom(filepath.Join(root, "operator", "api", "v1")); err != nil || got != root {
		t.Errorf("from the API module: %q, %v; want %s (its go.mod declares another module)", got, err, root)
	}
	if got := RepoRoot(); got != root && filepath.Clean(got) != root {
		t.Errorf("RepoRoot() %s, want %s", got, root)
	}
	if got, err := rootFrom(t.TempDir()); err == nil {
		t.Errorf("outside the repository: %s, want an error", got)
	}
}
