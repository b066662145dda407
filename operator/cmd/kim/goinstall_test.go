package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// `go install github.com/kyma-project/kim/operator/cmd/kim@<version>` (issue 30) builds the CLI from the published
// modules alone: the root module at that version and the API module (operator/api) at the version the root's
// go.mod requires. go install refuses a module whose go.mod has replace or exclude directives, and it ignores go.work.

const (
	rootModulePath = "github.com/kyma-project/kim"
	apiModulePath  = "github.com/kyma-project/kim/operator/api"
	apiModuleDir   = "operator/api"
	// goInstallTestVersion is the version under which TestGoInstallFromModuleProxy serves this clone's root module.
	goInstallTestVersion = "v0.0.0-goinstalltest"
)

func repositoryRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// moduleFiles parses the root's go.mod and go.work.
func moduleFiles(t *testing.T, root string) (*modfile.File, *modfile.WorkFile) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	work, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mod, work
}

// requiredAPIVersion is the version of the API module the root's go.mod requires.
func requiredAPIVersion(t *testing.T, mod *modfile.File) string {
	t.Helper()
	for _, r := range mod.Require {
		if r.Mod.Path == apiModulePath {
			return r.Mod.Version
		}
	}
	t.Fatalf("go.mod does not require %s", apiModulePath)
	return ""
}

// TestModuleFilesAllowGoInstall: the root's go.mod has no replace or exclude directive (go install <module>@<version>
// refuses such a module) and requires the API module at a release version; go.work puts both modules of the clone
// in the workspace and maps exactly that version to ./operator/api, so builds in the clone use the local API.
func TestModuleFilesAllowGoInstall(t *testing.T) {
	mod, work := moduleFiles(t, repositoryRoot(t))
	for _, r := range mod.Replace {
		t.Errorf("go.mod replaces %s: go install <module>@<version> refuses a module with a replace directive; "+
			"a replacement for builds in the clone belongs in go.work", r.Old.Path)
	}
	for _, e := range mod.Exclude {
		t.Errorf("go.mod excludes %s %s: go install <module>@<version> refuses a module with an exclude directive",
			e.Mod.Path, e.Mod.Version)
	}
	apiVersion := requiredAPIVersion(t, mod)
	if !semver.IsValid(apiVersion) || semver.Canonical(apiVersion) != apiVersion || semver.Build(apiVersion) != "" {
		t.Errorf("go.mod requires %s at %q, not a version the release can tag (operator/api/vX.Y.Z)", apiModulePath,
			apiVersion)
	}

	var uses []string
	for _, u := range work.Use {
		uses = append(uses, u.Path)
	}
	if strings.Join(uses, " ") != ". ./"+apiModuleDir {
		t.Errorf("go.work uses %v, want exactly . and ./%s (the tools modules stay out)", uses, apiModuleDir)
	}
	if work.Go == nil || mod.Go == nil || work.Go.Version != mod.Go.Version {
		t.Errorf("go.work and go.mod disagree on the go version (%v, %v): the workspace must not demand a newer Go",
			work.Go, mod.Go)
	}
	want := fmt.Sprintf("%s %s => ./%s", apiModulePath, apiVersion, apiModuleDir)
	var replaces []string
	for _, r := range work.Replace {
		replaces = append(replaces, strings.TrimSpace(fmt.Sprintf("%s %s => %s %s", r.Old.Path, r.Old.Version,
			r.New.Path, r.New.Version)))
	}
	if len(replaces) != 1 || replaces[0] != want {
		t.Errorf("go.work replaces %q, want only %q (make api-version API_VERSION=%s sets both files)", replaces,
			want, apiVersion)
	}
}

// TestGoInstallFromModuleProxy runs `go install github.com/kyma-project/kim/operator/cmd/kim@<version>` in an empty
// directory, as a user does, against a module proxy in a temporary directory (GOPROXY=file://...) that serves this
// clone's two modules the way the public proxy serves a release: the root at goInstallTestVersion and the API module
// at the version the root requires, each a module zip of the files git tracks or would track (untracked files not
// ignored). Every other module comes from the shared module cache (read as a proxy) or the configured proxy. The
// module cache of the install is a temporary one, so the locally built versions never enter the shared one. Then the
// installed binary runs `kim --version`, and its build information shows both modules at those versions, unreplaced.
func TestGoInstallFromModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the CLI from a module proxy (minutes): make test-go-install")
	}
	root := repositoryRoot(t)
	mod, _ := moduleFiles(t, root)
	apiVersion := requiredAPIVersion(t, mod)

	files := trackedFiles(t, root)
	var apiFiles []modzip.File
	haveLicense := false
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f.rel, apiModuleDir+"/"); ok {
			apiFiles = append(apiFiles, diskFile{rel: rel, abs: f.abs})
			haveLicense = haveLicense || rel == "LICENSE"
		}
	}
	if !haveLicense { // the go command adds the repository's LICENSE to a module in a subdirectory that has none
		apiFiles = append(apiFiles, diskFile{rel: "LICENSE", abs: filepath.Join(root, "LICENSE")})
	}
	rootFiles := make([]modzip.File, len(files)) // modzip.Create leaves out the nested modules
	for i, f := range files {
		rootFiles[i] = f
	}

	work := t.TempDir()
	proxy := filepath.Join(work, "proxy")
	publishModule(t, proxy, module.Version{Path: rootModulePath, Version: goInstallTestVersion},
		filepath.Join(root, "go.mod"), rootFiles)
	publishModule(t, proxy, module.Version{Path: apiModulePath, Version: apiVersion},
		filepath.Join(root, apiModuleDir, "go.mod"), apiFiles)

	sharedCache := goEnv(t, "GOMODCACHE")
	upstream := goEnv(t, "GOPROXY")
	gobin := filepath.Join(work, "bin")
	scratch := filepath.Join(work, "scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "install", rootModulePath+"/operator/cmd/kim@"+goInstallTestVersion)
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(sharedCache, "cache", "download"))+","+upstream,
		"GOMODCACHE="+filepath.Join(work, "modcache"),
		// Only the two local modules skip the checksum database (it does not know them); every dependency is checked.
		"GONOSUMDB="+rootModulePath,
		"GOPRIVATE=", "GONOPROXY=",
		"GOWORK=off",
		"GOBIN="+gobin,
		// -modcacherw lets the test remove its module cache; -trimpath keys the compiled packages by module
		// version rather than by the temporary directory, so a second run reuses the build cache.
		"GOFLAGS=-modcacherw -trimpath",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("go install %s/operator/cmd/kim@%s: %v\n%s", rootModulePath, goInstallTestVersion, err, out.String())
	}
	t.Logf("go install took %s", time.Since(start).Round(time.Second))

	bin := filepath.Join(gobin, "kim")
	version, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("kim --version: %v\n%s", err, version)
	}
	// Without -ldflags the CLI reports the module version it was installed at (issue 43), not "dev".
	if want := "kim " + strings.TrimPrefix(goInstallTestVersion, "v") + " ("; !strings.HasPrefix(string(version), want) {
		t.Errorf("kim --version printed %q, want the installed version: %q...", version, want)
	}
	t.Logf("kim --version: %s", strings.TrimSpace(string(version)))

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if info.Main.Path != rootModulePath || info.Main.Version != goInstallTestVersion || info.Main.Replace != nil {
		t.Errorf("main module %s %s (replaced by %v), want %s %s", info.Main.Path, info.Main.Version,
			info.Main.Replace, rootModulePath, goInstallTestVersion)
	}
	foundAPI := false
	for _, d := range info.Deps {
		if d.Replace != nil {
			t.Errorf("dependency %s %s is replaced by %s %s", d.Path, d.Version, d.Replace.Path, d.Replace.Version)
		}
		if d.Path == apiModulePath {
			foundAPI = true
			if d.Version != apiVersion {
				t.Errorf("API module at %s, want %s (the root's requirement)", d.Version, apiVersion)
			}
		}
	}
	if !foundAPI {
		t.Errorf("the binary does not list %s among its dependencies", apiModulePath)
	}
}

// diskFile is a file of the clone as modzip.Create wants it: rel is its path in the module.
type diskFile struct{ rel, abs string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// trackedFiles are the files of the clone a commit would publish: tracked ones that still exist and untracked ones
// that are not ignored (build output such as bin/ is).
func trackedFiles(t *testing.T, root string) []diskFile {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files (the test needs a git clone): %v", err)
	}
	seen := map[string]bool{}
	var files []diskFile
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if _, err := os.Lstat(abs); err != nil { // deleted in the work tree, not yet in the index
			continue
		}
		files = append(files, diskFile{rel: rel, abs: abs})
	}
	if len(files) < 100 {
		t.Fatalf("git ls-files listed only %d files", len(files))
	}
	return files
}

// publishModule writes module m into a file-system module proxy (the GOPROXY protocol: @v/list, .info, .mod, .zip).
func publishModule(t *testing.T, proxy string, m module.Version, goMod string, files []modzip.File) {
	t.Helper()
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(proxy, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, m.Version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{
		"list":               []byte(m.Version + "\n"),
		escVersion + ".info": []byte(info),
		escVersion + ".mod":  mod,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zf, err := os.Create(filepath.Join(dir, escVersion+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	if err := modzip.Create(zf, m, files); err != nil {
		t.Fatalf("module zip of %s: %v", m, err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
}

// goEnv is one variable of `go env` (environment, go env file or default).
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
