package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// fakeOPM stands in for opm (operator-registry is not available here): init and render print what opm prints for a
// package and a bundle named like bundlegen names CSVs; validate and generate record their call.
const fakeOPM = `#!/usr/bin/env bash
set -euo pipefail
echo "$*" >>"${OPM_LOG}"
case "$1 $2" in
  "init "*) echo "schema: olm.package"; echo "name: $2"; echo "defaultChannel: ${3#--default-channel=}" ;;
  "render "*) echo "schema: olm.bundle"; echo "name: kim.v${FAKE_VERSION}"; echo "package: kim"; echo "image: $2" ;;
  "validate "*) ;;
  "generate dockerfile")
    base="${FAKE_BASE:-}"
    for a in "$@"; do case "$a" in --base-image=*) [ -n "${base}" ] || base="${a#--base-image=}" ;; esac; done
    printf 'FROM %s AS builder\nFROM %s\n' "${base:-quay.io/operator-framework/opm:latest}" "${base:-quay.io/operator-framework/opm:latest}" >"$3.Dockerfile" ;;
  *) echo "unexpected opm call: $*" >&2; exit 1 ;;
esac
`

// catalogFixture returns a scratch directory with the fake opm, the log it writes, and hack/catalog.sh.
func catalogFixture(t *testing.T) (dir, opm, log, script string) {
	t.Helper()
	dir = t.TempDir()
	opm = filepath.Join(dir, "opm")
	if err := os.WriteFile(opm, []byte(fakeOPM), 0o755); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(repoRoot(t), "hack", "catalog.sh")
	if _, err := os.ReadFile(script); err != nil { // read here so go test's cache notices a changed script
		t.Fatal(err)
	}
	return dir, opm, filepath.Join(dir, "opm.log"), script
}

// TestCatalogScript runs hack/catalog.sh (what `make catalog-build` runs before building the image) with a fake
// opm: the file-based catalog holds the package, the rendered bundle and one channel per CHANNELS entry whose entry
// is the bundle bundlegen names <package>.v<version>, upgradable from any older version; opm validates it.
func TestCatalogScript(t *testing.T) {
	dir, opm, log, script := catalogFixture(t)
	pinned := "quay.io/operator-framework/opm:v1.55.0@sha256:" + strings.Repeat("0", 64)
	runWith := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(script, args...)
		cmd.Env = append(append(os.Environ(), "OPM="+opm, "OPM_LOG="+log, "FAKE_VERSION=0.2.0"), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func(args ...string) (string, error) { return runWith([]string{"CATALOG_BASE_IMG=" + pinned}, args...) }
	catalog := filepath.Join(dir, "catalog")
	if out, err := run(catalog, defaultPackage, "0.2.0", "registry.example/kim-bundle:v0.2.0", "fast,stable", "stable"); err != nil {
		t.Fatalf("catalog.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(catalog, defaultPackage, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type blob struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
		Image          string `json:"image"`
		Entries        []struct {
			Name      string `json:"name"`
			SkipRange string `json:"skipRange"`
		} `json:"entries"`
	}
	var got []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var b blob
		if err := yaml.Unmarshal([]byte(doc), &b); err != nil {
			t.Fatalf("decode %q: %v", doc, err)
		}
		line := b.Schema + " " + b.Name + " " + b.DefaultChannel + b.Image
		for _, e := range b.Entries {
			line += " -> " + e.Name + " skipRange " + e.SkipRange
		}
		got = append(got, strings.TrimSpace(line))
	}
	want := []string{
		"olm.package kim stable",
		"olm.bundle kim.v0.2.0 registry.example/kim-bundle:v0.2.0",
		"olm.channel fast  -> kim.v0.2.0 skipRange <0.2.0",
		"olm.channel stable  -> kim.v0.2.0 skipRange <0.2.0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog blobs (-want +got):\n%s", diff)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"validate " + catalog, "generate dockerfile " + catalog} {
		if !strings.Contains(string(calls), c) {
			t.Errorf("opm was not called with %q; calls:\n%s", c, calls)
		}
	}
	if df, err := os.ReadFile(catalog + ".Dockerfile"); err != nil || strings.Count(string(df), "FROM "+pinned) != 2 {
		t.Errorf("catalog Dockerfile %q (%v): want both stages FROM the pinned %s", df, err, pinned)
	}
	if out, err := run(catalog, defaultPackage, "0.2.0", "img", "fast", "stable"); err == nil || !strings.Contains(out, "not one of the channels") {
		t.Errorf("a default channel outside CHANNELS: err %v\n%s", err, out)
	}
}

// TestCatalogScriptRefusesAnUnpinnedBaseImage: the catalog image is built only on an opm image pinned by digest
// (CATALOG_BASE_IMG): none, a tag, or a malformed digest are refused before opm runs, and a Dockerfile that names
// another image than the pin (an opm that ignores the flag) is refused after.
func TestCatalogScriptRefusesAnUnpinnedBaseImage(t *testing.T) {
	dir, opm, log, script := catalogFixture(t)
	pinned := "quay.io/operator-framework/opm:v1.55.0@sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		reason string
		env    []string
		want   string
	}{
		{"no base image", nil, "is not an image pinned by digest"},
		{"a tag", []string{"CATALOG_BASE_IMG=quay.io/operator-framework/opm:v1.55.0"}, "is not an image pinned by digest"},
		{"latest", []string{"CATALOG_BASE_IMG=quay.io/operator-framework/opm:latest"}, "is not an image pinned by digest"},
		{"a short digest", []string{"CATALOG_BASE_IMG=quay.io/operator-framework/opm@sha256:abc"}, "is not an image pinned by digest"},
		{"upper-case hex", []string{"CATALOG_BASE_IMG=quay.io/operator-framework/opm@sha256:" + strings.Repeat("AB", 32)}, "is not an image pinned by digest"},
		{"an opm that writes another base image", []string{"CATALOG_BASE_IMG=" + pinned, "FAKE_BASE=quay.io/operator-framework/opm:latest"},
			"builds FROM quay.io/operator-framework/opm:latest, not the pinned"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_ = os.Remove(log)
			cmd := exec.Command(script, filepath.Join(dir, "catalog"), defaultPackage, "0.2.0", "registry.example/kim-bundle:v0.2.0", "fast", "fast")
			cmd.Env = append(append(os.Environ(), "OPM="+opm, "OPM_LOG="+log, "FAKE_VERSION=0.2.0"), tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("err %v, output:\n%s\nwant a refusal saying %q", err, out, tc.want)
			}
			if strings.Contains(tc.want, "pinned by digest") {
				if calls, _ := os.ReadFile(log); len(calls) != 0 {
					t.Errorf("opm ran before the refusal:\n%s", calls)
				}
			}
		})
	}
}
