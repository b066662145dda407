package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The two fixtures of testdata/osv: GO-2099-0001 affects example.com/lib, fixed in 1.2.3 and, after coming back in
// 2.0.0, in 2.0.5; GO-2099-0002 affects the standard library (fixed in 1.25.9 and 1.26.3) and example.com/lib from
// 1.0.0 on without a fix, and has no modification time (like every entry of golang.org/x/vulndb's data/osv).
const (
	wantModules = `[{"path":"example.com/lib","vulns":[` +
		`{"id":"GO-2099-0001","modified":"2026-01-02T03:04:05Z","fixed":"2.0.5"},` +
		`{"id":"GO-2099-0002","modified":"0001-01-01T00:00:00Z"}]},` +
		`{"path":"stdlib","vulns":[{"id":"GO-2099-0002","modified":"0001-01-01T00:00:00Z","fixed":"1.26.3"}]}]`
	wantVulns = `[{"id":"GO-2099-0001","modified":"2026-01-02T03:04:05Z","aliases":["CVE-2099-0001","GHSA-aaaa-bbbb-cccc"]},` +
		`{"id":"GO-2099-0002","modified":"0001-01-01T00:00:00Z"}]`
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixtures copies testdata/osv into a new directory with a file that is not an entry, which Build must skip.
func fixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"GO-2099-0001.json", "GO-2099-0002.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(readFile(t, filepath.Join("testdata", "osv", name))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "NOTICE"), []byte("not an entry"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuildWritesTheV1Layout(t *testing.T) {
	src := fixtures(t)
	dst := filepath.Join(t.TempDir(), "db")
	s, err := Build(src, dst, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 2 || s.Modules != 2 {
		t.Errorf("summary %+v, want 2 entries and 2 modules", s)
	}
	for file, want := range map[string]string{
		"index/modules.json": wantModules,
		"index/vulns.json":   wantVulns,
		// The newest entry is later than the commit time given: it decides.
		"index/db.json": `{"modified":"2026-01-02T03:04:05Z"}`,
	} {
		if got := readFile(t, filepath.Join(dst, file)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
	}
	for _, id := range []string{"GO-2099-0001", "GO-2099-0002"} {
		if got, want := readFile(t, filepath.Join(dst, "ID", id+".json")), readFile(t, filepath.Join(src, id+".json")); got != want {
			t.Errorf("ID/%s.json is not the entry unchanged:\n%s", id, got)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dst, "ID"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("ID/ has %d files, want the 2 entries", len(entries))
	}
}

// The entries of golang.org/x/vulndb carry no modification time: db.json takes the commit time of the module.
func TestBuildDatesTheDatabaseNoEarlierThanTheCommit(t *testing.T) {
	dst := t.TempDir()
	commit := time.Date(2026, 11, 5, 23, 49, 57, 0, time.FixedZone("CET", 3600))
	s, err := Build(fixtures(t), dst, commit)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(dst, "index", "db.json")), `{"modified":"2026-11-05T22:49:57Z"}`; got != want {
		t.Errorf("db.json %s, want %s", got, want)
	}
	if !s.Modified.Equal(commit) {
		t.Errorf("summary modified %s, want %s", s.Modified, commit)
	}
}

func TestBuildRejectsBadSources(t *testing.T) {
	for _, tc := range []struct {
		reason string
		files  map[string]string
		want   string
	}{
		{"file name is not the entry's id", map[string]string{"GO-2099-0003.json": `{"id":"GO-2099-0004"}`}, "named <id>.json"},
		{"entry without id", map[string]string{"GO-2099-0003.json": `{"affected":[]}`}, "named <id>.json"},
		{"not JSON", map[string]string{"GO-2099-0003.json": `{`}, "GO-2099-0003.json"},
		{"no entries at all (a wrong directory)", map[string]string{"README.md": "# not OSV"}, "no OSV entries"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			src := t.TempDir()
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			dst := t.TempDir()
			_, err := Build(src, dst, time.Time{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if complete(dst) {
				t.Error("a failed build left index/db.json")
			}
		})
	}
}

func TestLatestFixed(t *testing.T) {
	type ev = struct{ Introduced, Fixed string }
	semverRange := func(events ...ev) osvRange {
		r := osvRange{Type: "SEMVER"}
		for _, e := range events {
			r.Events = append(r.Events, struct {
				Introduced string `json:"introduced,omitempty"`
				Fixed      string `json:"fixed,omitempty"`
			}{e.Introduced, e.Fixed})
		}
		return r
	}
	for _, tc := range []struct {
		reason string
		ranges []osvRange
		want   string
	}{
		{"one fix", []osvRange{semverRange(ev{"0", ""}, ev{"", "1.2.3"})}, "1.2.3"},
		{"the highest fix, compared as versions not strings", []osvRange{semverRange(ev{"0", ""}, ev{"", "1.10.0"}, ev{"1.9.0", ""}, ev{"", "1.9.4"})}, "1.10.0"},
		{"never fixed", []osvRange{semverRange(ev{"0", ""})}, ""},
		{"introduced again after the last fix", []osvRange{semverRange(ev{"0", ""}, ev{"", "1.2.3"}, ev{"2.0.0", ""})}, ""},
		{"a later range introduces it again", []osvRange{semverRange(ev{"0", ""}, ev{"", "1.2.3"}), semverRange(ev{"1.5.0", ""})}, ""},
		{"fixed in several ranges", []osvRange{semverRange(ev{"2.0.0", ""}, ev{"", "2.1.0"}), semverRange(ev{"0", ""}, ev{"", "1.4.0"})}, "2.1.0"},
		{"pseudo-versions", []osvRange{semverRange(ev{"0.0.0-20250721152936-fe86ceb2c3fa", ""}, ev{"", "0.0.0-20260626085133-7cb96ac80a6d"})}, "0.0.0-20260626085133-7cb96ac80a6d"},
		{"release candidates of the standard library", []osvRange{semverRange(ev{"1.26.0-0", ""}, ev{"", "1.26.0-rc.2"})}, "1.26.0-rc.2"},
		{"other range types do not count", []osvRange{{Type: "GIT", Events: semverRange(ev{"", "abc"}).Events}}, ""},
	} {
		if got := latestFixed(tc.ranges); got != tc.want {
			t.Errorf("%s: latestFixed = %q, want %q", tc.reason, got, tc.want)
		}
	}
}

// fakeVulndb is a module directory as `go mod download` leaves it: the fixtures in data/osv and an .info file.
func fakeVulndb(t *testing.T, version, sum string) (module, *int) {
	t.Helper()
	dir := t.TempDir()
	osv := filepath.Join(dir, "data", "osv")
	if err := os.MkdirAll(osv, 0o750); err != nil {
		t.Fatal(err)
	}
	src := fixtures(t)
	for _, name := range []string{"GO-2099-0001.json", "GO-2099-0002.json"} {
		if err := os.WriteFile(filepath.Join(osv, name), []byte(readFile(t, filepath.Join(src, name))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	info := filepath.Join(t.TempDir(), version+".info")
	if err := os.WriteFile(info, []byte(`{"Version":"`+version+`","Time":"2026-11-05T23:49:57Z"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return module{Version: version, Dir: dir, Info: info, Sum: sum}, new(int)
}

func TestDBBuildsOnceThenReusesTheCache(t *testing.T) {
	const version = "v0.0.0-20261105234957-e22db6528018"
	cache := t.TempDir()
	mod, calls := fakeVulndb(t, version, "h1:good")
	download := func(v string) (module, error) {
		*calls++
		if v != version {
			t.Errorf("downloaded %s, want %s", v, version)
		}
		return mod, nil
	}
	args := []string{"-version", version, "-sum", "h1:good", "-cache", cache}
	want := filepath.Join(cache, version) + "\n"
	for i := range 2 {
		var stdout, stderr bytes.Buffer
		if err := runDB(args, &stdout, &stderr, download); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if stdout.String() != want {
			t.Errorf("run %d printed %q, want %q", i+1, stdout.String(), want)
		}
	}
	if *calls != 1 {
		t.Errorf("%d downloads, want 1 (the second run uses the cache)", *calls)
	}
	if got := readFile(t, filepath.Join(cache, version, "index", "modules.json")); got != wantModules {
		t.Errorf("modules.json %s", got)
	}
	if got, want := readFile(t, filepath.Join(cache, version, "index", "db.json")), `{"modified":"2026-11-05T23:49:57Z"}`; got != want {
		t.Errorf("db.json %s, want %s (the commit time)", got, want)
	}
	left, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Errorf("the cache holds %d entries, want only the database (no build directory left)", len(left))
	}
}

func TestDBRefusesAnotherHash(t *testing.T) {
	const version = "v0.0.0-20261105234957-e22db6528018"
	cache := t.TempDir()
	mod, _ := fakeVulndb(t, version, "h1:other")
	err := runDB([]string{"-version", version, "-sum", "h1:good", "-cache", cache}, &bytes.Buffer{}, &bytes.Buffer{},
		func(string) (module, error) { return mod, nil })
	if err == nil || !strings.Contains(err.Error(), "h1:other") {
		t.Fatalf("error %v, want the hash mismatch", err)
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("the cache holds %d entries after a refused download, want none", len(left))
	}
}

func TestDBCommandLine(t *testing.T) {
	noDownload := func(string) (module, error) { return module{}, errors.New("no download expected") }
	for _, args := range [][]string{nil, {"-version", "../x"}, {"-version", "v1", "extra"}, {"-unknown"}} {
		if err := runDB(args, &bytes.Buffer{}, &bytes.Buffer{}, noDownload); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

// TestKnownVulnerableCallIsFound is the check `make vulncheck` runs after building the real database: govulncheck
// with that database, and the report after it, must find GO-2021-0113 (golang.org/x/text/language.Parse before
// x/text 0.3.7) called in a scratch module, so that an empty or unreadable database, or a report that misreads
// govulncheck's output, cannot pass as "no vulnerabilities". It needs GOVULNCHECK (the binary), VULNDB_DIR (the
// database) and the module proxy, so it skips without them.
func TestKnownVulnerableCallIsFound(t *testing.T) {
	govulncheck, db := os.Getenv("GOVULNCHECK"), os.Getenv("VULNDB_DIR")
	if govulncheck == "" || db == "" {
		t.Skip("needs GOVULNCHECK and VULNDB_DIR: run `make vulncheck`")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module kim.local/vulncheck-canary\n\ngo 1.26\n\nrequire golang.org/x/text v0.3.5\n",
		"main.go": "package main\n\nimport \"golang.org/x/text/language\"\n\nfunc main() { _, _ = language.Parse(\"en\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	cmd := exec.Command(govulncheck, "-db", "file://"+db, "-format", "json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("govulncheck: %v\n%s", err, stderr.String())
	}
	s, err := readScan("canary", bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var printed bytes.Buffer
	err = report([]*scan{s}, nil, "", &printed)
	if !errors.Is(err, errCalled) || !strings.Contains(err.Error(), "GO-2021-0113") {
		t.Fatalf("report: %v, want GO-2021-0113 called\n%s", err, printed.String())
	}
	if !strings.Contains(printed.String(), "main.go:5:") || !strings.Contains(printed.String(), "language.Parse") {
		t.Errorf("the report does not show the call of language.Parse in main.go:\n%s", printed.String())
	}
}
