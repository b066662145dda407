package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// GoldenConfig is the operator configuration the golden shoots are generated with.
func GoldenConfig() string {
	return filepath.Join(RepoRoot(), "adapters", "gardener", "testdata", "config.yaml")
}

// WriteConfig writes an operator configuration for a test: the golden one with the given deletion section. It
// returns the file's path (in a directory removed when the test ends).
func WriteConfig(t testing.TB, deletion map[string]any) string {
	t.Helper()
	return WriteConfigWith(t, map[string]any{"deletion": deletion})
}

// WriteConfigWith writes the golden operator configuration with the given top-level sections replaced (a nil
// section is left as the golden file has it); see WriteConfig.
func WriteConfigWith(t testing.TB, sections map[string]any) string {
	t.Helper()
	raw, err := os.ReadFile(GoldenConfig())
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range sections {
		if v != nil {
			doc[k] = v
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
