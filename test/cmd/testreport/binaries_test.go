package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGoTestFlagsBecomeTheTestBinarys(t *testing.T) {
	gt, err := parseGoTest([]string{"go", "test", "-json", "-count=1", "-vet=off", "-timeout", "40m", "-skip",
		"^(TestA|TestB)$", "-short", "-p=3", "-run", "^TestC$", "./a", "m/b"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-test.count=1", "-test.timeout=40m", "-test.skip=^(TestA|TestB)$", "-test.short", "-test.run=^TestC$"}
	if diff := cmp.Diff(want, gt.testFlags); diff != "" {
		t.Errorf("test binary flags (-want +got):\n%s", diff)
	}
	if gt.parallel != 3 || !cmp.Equal(gt.patterns, []string{"./a", "m/b"}) {
		t.Errorf("parallel %d, patterns %q; want 3 and [./a m/b]", gt.parallel, gt.patterns)
	}
	wantGo := []string{"-json", "-count=1", "-vet=off", "-timeout", "40m", "-skip", "^(TestA|TestB)$", "-short", "-p=3", "-run", "^TestC$"}
	if diff := cmp.Diff(wantGo, gt.goFlags); diff != "" {
		t.Errorf("go test flags (-want +got):\n%s", diff)
	}
	// A flag that changes the build (or one not known here) leaves the command to go test; so does a stream that is
	// not -json, which test2json would not make.
	for _, c := range [][]string{
		{"go", "test", "-json", "-race", "./..."},
		{"go", "test", "-json", "-tags", "x", "./..."},
		{"go", "test", "-count=1", "./..."},
		{"go", "test", "-json", "-timeout"},
		{"sh", "-c", "true"},
	} {
		if _, err := parseGoTest(c); err == nil {
			t.Errorf("%q: taken apart; want it left to go test", c)
		}
	}
}

// TestRerunRunsTheKeptBinaries runs a -short go test that keeps its binaries (two packages share a name, which one
// go test -o refuses), then what skipped there with -binaries: the long forms run from the kept binaries (their
// os.Args[0] is the kept file), a package whose binary is gone goes through go test, and the report says the same
// as a go test run would.
func TestRerunRunsTheKeptBinaries(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module m\n\ngo 1.24\n")
	for _, p := range []string{"a", "b", "x/a"} {
		name := filepath.Base(p)
		write(p+"/"+name+"_test.go", `package `+name+`

import (
	"os"
	"testing"
)

func TestUnit(t *testing.T) {}

func TestLong(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	wd, _ := os.Getwd()
	t.Logf("binary=%s dir=%s", os.Args[0], wd)
	if _, err := os.Stat("`+name+`_test.go"); err != nil {
		t.Fatal("not run in the package's directory")
	}
}
`)
	}
	t.Chdir(dir)
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "stale.test"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.json")
	if err := runCmd([]string{"-o", short, "-keep-binaries", bin, "--", "go", "test", "-json", "-count=1", "-short", "./..."}); err != nil {
		t.Fatalf("short run: %v", err)
	}
	kept, _ := filepath.Glob(filepath.Join(bin, "*", "*.test"))
	want := []string{filepath.Join(bin, "1", "a.test"), filepath.Join(bin, "1", "b.test"), filepath.Join(bin, "2", "a.test")}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Fatalf("kept binaries (-want +got); an earlier run's must be gone:\n%s", diff)
	}
	if err := os.Remove(filepath.Join(bin, "1", "b.test")); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(dir, "all.json")
	// A relative directory: the binaries start elsewhere.
	if err := runCmd([]string{"-o", all, "-rerun-skipped", short, "-binaries", "bin", "--", "go", "test", "-json", "-count=1"}); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	raw, err := os.ReadFile(all)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := loadReports(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.complete(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"m/a", "m/b", "m/x/a"} {
		if got := rep.verdicts(p, regexp.MustCompile(".")); !cmp.Equal(got, []string{"PASS TestLong"}) {
			t.Errorf("%s: verdicts %q; want only the long form run, and passed", p, got)
		}
	}
	stream := string(raw)
	for p, b := range map[string]string{"m/a": "1/a.test", "m/x/a": "2/a.test"} {
		if !regexp.MustCompile(`"Package":"` + regexp.QuoteMeta(p) + `".*binary=` + regexp.QuoteMeta(filepath.Join(bin, b)) + " ").MatchString(stream) {
			t.Errorf("%s did not run from its kept binary %s:\n%s", p, b, stream)
		}
	}
	if regexp.MustCompile(`"Package":"m/b".*binary=`+regexp.QuoteMeta(bin)).MatchString(stream) || !strings.Contains(stream, `"Package":"m/b"`) {
		t.Errorf("m/b, whose binary is gone, must run through go test:\n%s", stream)
	}
}

func TestKeepAndRunBinariesExcludeEachOther(t *testing.T) {
	dir := t.TempDir()
	err := runCmd([]string{"-o", filepath.Join(dir, "r.json"), "-keep-binaries", dir, "-binaries", dir, "--", "go", "test", "-json"})
	if err == nil {
		t.Fatal("accepted; want an error")
	}
	if err := runCmd([]string{"-o", filepath.Join(dir, "r.json"), "-keep-binaries", dir, "-rerun-skipped", filepath.Join(dir, "s.json"), "--", "go", "test", "-json"}); err == nil {
		t.Error("-keep-binaries accepted with -rerun-skipped; want an error")
	}
	if _, err := keepBinaries([]string{"sh", "-c", "true"}, dir); err == nil {
		t.Error("-keep-binaries accepted a command that is not go test")
	}
}
