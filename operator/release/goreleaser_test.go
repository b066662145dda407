// Package release holds the tests of the release configuration (.goreleaser.yaml): what it builds and stamps, and the
// krew plugin manifest it makes, validated by krew's own validator. `make release-check` runs them with the pinned
// goreleaser and krew validator; without them (plain `go test ./...`) only the checks of the file itself run.
package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const root = "../.."

// config is the part of .goreleaser.yaml the tests read.
type config struct {
	Dist   string `json:"dist"`
	Before struct {
		Hooks []string `json:"hooks"`
	} `json:"before"`
	Builds []struct {
		ID      string   `json:"id"`
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
		Ldflags []string `json:"ldflags"`
	} `json:"builds"`
	Krews []struct {
		Name string   `json:"name"`
		IDs  []string `json:"ids"`
	} `json:"krews"`
	Release struct {
		ExtraFiles []struct {
			Glob string `json:"glob"`
		} `json:"extra_files"`
	} `json:"release"`
}

func readConfig(t *testing.T) (config, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c config
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if len(c.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml has %d builds, want the one of the kim CLI", len(c.Builds))
	}
	return c, raw
}

// stampVariable is a -X of the version stamp: the variable and the value it is set to.
var stampVariable = regexp.MustCompile(`-X\s+(github\.com/kyma-project/kim/operator/version\.\w+)=(\S+)`)

// TestGoreleaserBuildsTheCLI: the release builds ./operator/cmd/kim as kim, without cgo, for linux and darwin on
// amd64 and arm64, stamped with every variable the Makefile's LDFLAGS set; it makes the krew plugin kim; and it
// attaches dist/install.yaml, which its before hook writes outside goreleaser's own dist directory (--clean empties
// that one).
func TestGoreleaserBuildsTheCLI(t *testing.T) {
	c, _ := readConfig(t)
	b := c.Builds[0]
	if b.Main != "./operator/cmd/kim" || b.Binary != "kim" {
		t.Errorf("the build makes %s from %s, want kim from ./operator/cmd/kim", b.Binary, b.Main)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("the build's environment %v lacks CGO_ENABLED=0", b.Env)
	}
	for _, p := range [][2][]string{{b.Goos, {"darwin", "linux"}}, {b.Goarch, {"amd64", "arm64"}}} {
		got := slices.Sorted(slices.Values(p[0]))
		if !slices.Equal(got, p[1]) {
			t.Errorf("the build's platforms %v, want %v", got, p[1])
		}
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, m := range stampVariable.FindAllStringSubmatch(string(makefile), -1) {
		want[m[1]] = true
	}
	if len(want) < 3 {
		t.Fatalf("the Makefile stamps %v; the reader misses its LDFLAGS", want)
	}
	got := map[string]bool{}
	for _, m := range stampVariable.FindAllStringSubmatch(strings.Join(b.Ldflags, " "), -1) {
		got[m[1]] = true
	}
	for v := range want {
		if !got[v] {
			t.Errorf("the Makefile's LDFLAGS set %s, .goreleaser.yaml's ldflags do not", v)
		}
	}

	if len(c.Krews) != 1 || c.Krews[0].Name != "kim" {
		t.Errorf("krews %+v, want the one plugin kim", c.Krews)
	}
	var globs []string
	for _, f := range c.Release.ExtraFiles {
		globs = append(globs, f.Glob)
	}
	if !slices.Contains(globs, "dist/install.yaml") {
		t.Errorf("the release attaches %v, not dist/install.yaml", globs)
	}
	if !slices.ContainsFunc(c.Before.Hooks, func(h string) bool { return strings.HasPrefix(h, "make build-installer ") }) {
		t.Errorf("no before hook runs make build-installer: %v", c.Before.Hooks)
	}
	if d := path.Clean(c.Dist); d == "." || d == "dist" || !strings.HasPrefix(d, "dist/") {
		t.Errorf("dist is %q: goreleaser --clean would remove dist/install.yaml; want a directory below dist/", c.Dist)
	}
}

// krewManifest is the part of a krew plugin manifest the snapshot test reads.
type krewManifest struct {
	Metadata struct{ Name string } `json:"metadata"`
	Spec     struct {
		Version   string `json:"version"`
		Platforms []struct {
			URI      string `json:"uri"`
			Sha256   string `json:"sha256"`
			Bin      string `json:"bin"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"platforms"`
	} `json:"spec"`
}

// tool returns the path of a pinned tool the Makefile passes in the environment variable name, or skips the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		t.Skipf("%s is not set; `make release-check` sets it", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", name, p, err)
	}
	return p
}

// TestGoreleaserSnapshot runs goreleaser on .goreleaser.yaml with the kim CLI replaced by a stub package (the same
// builds, archives and krew section, built in seconds) and checks what it makes: krew's validator accepts the plugin
// manifest; it names the four platforms, each with an archive of goreleaser's that has that checksum and holds the
// binary kim and a licence; and the binary carries the version stamp of the build's ldflags.
func TestGoreleaserSnapshot(t *testing.T) {
	goreleaser := tool(t, "GORELEASER")
	validate := tool(t, "KREW_VALIDATE")
	_, raw := readConfig(t)

	dist := filepath.Join(t.TempDir(), "dist")
	raw["dist"] = dist
	build := raw["builds"].([]any)[0].(map[string]any)
	build["main"] = "./operator/release/testdata/stub"
	// dist/install.yaml is the before hook's (skipped here); the test of make build-installer covers it.
	delete(raw["checksum"].(map[string]any), "extra_files")
	data, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "goreleaser.yaml")
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Signing needs the release workflow's OIDC identity (keyless cosign); its configuration is checked apart.
	cmd := exec.Command(goreleaser, "release", "--snapshot", "--clean", "--skip=before,sbom,sign", "--config", cfg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), originForGoreleaser(t)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s", err, out)
	}

	manifest := filepath.Join(dist, "krew", "kim.yaml")
	if out, err := exec.Command(validate, "-skip-install", "-manifest", manifest).CombinedOutput(); err != nil {
		t.Fatalf("krew's validator rejects the manifest: %v\n%s", err, out)
	}
	data, err = os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m krewManifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version string }
	readJSON(t, filepath.Join(dist, "metadata.json"), &meta)
	if m.Spec.Version != "v"+meta.Version {
		t.Errorf("the manifest's version %s, want v%s", m.Spec.Version, meta.Version)
	}
	var platforms []string
	for _, p := range m.Spec.Platforms {
		platforms = append(platforms, p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"])
		if p.Bin != "kim" {
			t.Errorf("%s: bin %q, want kim (krew links kubectl-kim to it)", p.URI, p.Bin)
		}
		if !strings.HasPrefix(p.URI, "https://github.com/kyma-project/kim/releases/download/") {
			t.Errorf("uri %s is not an asset of the project's GitHub releases", p.URI)
		}
		archive := filepath.Join(dist, path.Base(p.URI))
		if sum := sha256File(t, archive); sum != p.Sha256 {
			t.Errorf("%s: sha256 %s in the manifest, %s of the archive", path.Base(p.URI), p.Sha256, sum)
		}
		files := tarGzFiles(t, archive)
		for _, want := range []string{p.Bin, "LICENSE"} {
			if !slices.Contains(files, want) {
				t.Errorf("%s holds %v, not %s at its top", path.Base(p.URI), files, want)
			}
		}
	}
	slices.Sort(platforms)
	if want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the manifest's platforms %v, want %v", platforms, want)
	}

	// The stamp: run this machine's binary.
	var artifacts []struct {
		Type, Path, Goos, Goarch string
	}
	readJSON(t, filepath.Join(dist, "artifacts.json"), &artifacts)
	i := slices.IndexFunc(artifacts, func(a struct{ Type, Path, Goos, Goarch string }) bool {
		return a.Type == "Binary" && a.Goos == runtime.GOOS && a.Goarch == runtime.GOARCH
	})
	if i < 0 {
		t.Skipf("no binary for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}
	bin := artifacts[i].Path
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(root, bin)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Version=" + meta.Version + "\n", "GitCommit=" + gitHead(t) + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the built binary prints\n%s\nwithout %q: the ldflags do not stamp it", out, want)
		}
	}
}

// originForGoreleaser returns the environment that gives a clone without a remote (a local worktree) the project's
// origin for goreleaser, which otherwise drops all git information in a snapshot and stamps the commit "none"; the
// clone's configuration stays untouched.
func originForGoreleaser(t *testing.T) []string {
	t.Helper()
	if exec.Command("git", "-C", root, "remote", "get-url", "origin").Run() == nil {
		return nil
	}
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url", "GIT_CONFIG_VALUE_0=https://github.com/kyma-project/kim.git"}
}

func readJSON(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func gitHead(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func sha256File(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tarGzFiles lists the regular files of a .tar.gz archive.
func tarGzFiles(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var names []string
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
}

// TestGoreleaserSignsTheChecksums: the release signs checksums.txt, which covers every archive, SBOM and install.yaml,
// keyless with cosign into one Sigstore bundle (the workflow installs cosign and grants the OIDC token); the
// workflow scans the manager image before it signs it.
func TestGoreleaserSignsTheChecksums(t *testing.T) {
	_, raw := readConfig(t)
	signs, _ := raw["signs"].([]any)
	if len(signs) != 1 {
		t.Fatalf("signs: %v, want one cosign signature of the checksums", raw["signs"])
	}
	s, _ := signs[0].(map[string]any)
	var args []string
	for _, a := range s["args"].([]any) {
		args = append(args, a.(string))
	}
	if s["cmd"] != "cosign" || s["artifacts"] != "checksum" || s["signature"] != "${artifact}.sigstore.json" ||
		!slices.Equal(args, []string{"sign-blob", "--bundle=${signature}", "--yes", "${artifact}"}) {
		t.Errorf("signs[0] = %v; want cosign sign-blob of the checksum file into a Sigstore bundle", s)
	}
	wf, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sigstore/cosign-installer@", "id-token: write", "cosign sign --yes --recursive", "aquasecurity/trivy-action@", "make sign-olm-images"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("the release workflow lacks %q", want)
		}
	}
}
