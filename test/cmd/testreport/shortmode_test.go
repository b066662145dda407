package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortModeOnlySkips holds the premise of -rerun-skipped: a test that behaves differently under -short skips
// (itself, a subtest, or the whole package from TestMain), so the report of the -short run shows it and make
// test-all runs its long form. A test that only shortened itself silently (fewer iterations) would never run in full.
func TestShortModeOnlySkips(t *testing.T) {
	var bad []string
	err := filepath.WalkDir("../../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || path == "../../../test/cmd/testreport/shortmode_test.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(src), "\n")
		for i, l := range lines {
			if !strings.Contains(l, "testing.Short()") {
				continue
			}
			window := strings.Join(lines[i:min(i+6, len(lines))], "\n")
			if !strings.Contains(window, "Skip") && !strings.Contains(window, "os.Exit(0)") {
				bad = append(bad, strings.TrimPrefix(path, "../../../")+":"+fmt.Sprint(i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: testing.Short() without a skip within five lines; mark a shortened form with a skipped subtest (as TestSafetyProperties does), or make test-all never runs the long form", b)
	}
}
