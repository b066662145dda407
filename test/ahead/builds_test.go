package ahead

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// buildSettings returns the KEY=VALUE words of the first group of re's first match in file.
func buildSettings(t *testing.T, file string, re *regexp.Regexp) map[string]string {
	t.Helper()
	m := re.FindSubmatch(read(t, file))
	if m == nil {
		t.Fatalf("%s has no line matching %s", file, re)
	}
	settings := map[string]string{}
	for _, word := range strings.Fields(string(m[1])) {
		if k, v, ok := strings.Cut(word, "="); ok && strings.ToUpper(k) == k {
			settings[k] = strings.Trim(v, `"`)
		}
	}
	return settings
}

func read(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hack/share-build.sh builds the envtest API servers with the settings of make test's own builds, or a
// fresh machine compiles the packages they share with the repository twice (a package's cache key includes them).
func TestToolsBuildLikeTheTests(t *testing.T) {
	tests := buildSettings(t, "../../Makefile", regexp.MustCompile(`(?m)^FIPS_BUILD = (.*)$`))
	shared := buildSettings(t, "../../hack/share-build.sh", regexp.MustCompile(`(?m)^BUILD_ENV=\((.*)\)$`))
	for _, k := range []string{"CGO_ENABLED", "GOFIPS140"} {
		if tests[k] == "" || tests[k] != shared[k] {
			t.Errorf("%s: the Makefile's FIPS_BUILD has %q, hack/share-build.sh's BUILD_ENV %q", k, tests[k], shared[k])
		}
	}
	if !strings.Contains(tests["GOFLAGS"], "-trimpath") {
		t.Errorf("FIPS_BUILD builds without -trimpath (%q): the tools' builds pass it", tests["GOFLAGS"])
	}
	build := regexp.MustCompile(`hack/share-build\.sh"( -if "[^"]+")? go build -trimpath `)
	for file, want := range map[string]int{"../../hack/envtest.sh": 2} {
		if got := len(build.FindAll(read(t, file), -1)); got != want {
			t.Errorf("%s: %d go builds through hack/share-build.sh with -trimpath; want %d", file, got, want)
		}
	}
}
