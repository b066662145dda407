package version_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/kim/operator/version"
)

// TestLinkerStampSetsVersion builds a binary the way the Makefile does and checks that -X reaches the variables.
func TestLinkerStampSetsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	if _, err := os.ReadFile("testdata/stamp/main.go"); err != nil { // so go test's cache notices a change
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "stamp")
	ldflags := "-X github.com/kyma-project/kim/operator/version.Version=9.8.7 -X github.com/kyma-project/kim/operator/version.GitCommit=abc123"
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "./testdata/stamp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); !strings.HasPrefix(got, "9.8.7 (commit abc123") {
		t.Errorf("stamped binary printed %q, want version 9.8.7 and commit abc123", got)
	}
}

// TestBuildFilesStampExistingVariables: the -X flags of the Makefile and the Dockerfile name variables of this
// package; a renamed variable would silently leave every release unstamped (the linker ignores unknown names).
func TestBuildFilesStampExistingVariables(t *testing.T) {
	src, err := os.ReadFile("version.go")
	if err != nil {
		t.Fatal(err)
	}
	x := regexp.MustCompile(`-X +github\.com/kyma-project/kim/operator/version\.([A-Za-z]+)=`)
	for _, f := range []string{"../../Makefile", "../../Dockerfile"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		matches := x.FindAllStringSubmatch(string(data), -1)
		if len(matches) < 2 {
			t.Errorf("%s stamps fewer than two variables (Version, GitCommit): %v", f, matches)
		}
		for _, m := range matches {
			if !regexp.MustCompile(`(?m)^\s+` + m[1] + ` += "`).Match(src) {
				t.Errorf("%s sets %s, which is not a string variable of package version", f, m[1])
			}
		}
	}
}

func TestGetFallsBackToVCSStamp(t *testing.T) {
	if got := version.Get(); got.GitCommit == "" || got.GoVersion == "" || got.Version == "" {
		t.Errorf("incomplete stamp %+v", got)
	}
}
