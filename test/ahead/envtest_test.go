package ahead

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// buildSettings returns the KEY=VALUE words of the first line of file matched by re (its first group).
func buildSettings(t *testing.T, file string, re *regexp.Regexp) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := re.FindSubmatch(b)
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

// hack/envtest.sh builds the API servers with the settings of make test's own builds, or a fresh machine compiles
// the ~1,150 packages they share with the repository twice (a package's cache key includes those settings).
func TestEnvtestBuildsLikeTheTests(t *testing.T) {
	tests := buildSettings(t, "../../Makefile", regexp.MustCompile(`(?m)^FIPS_BUILD = (.*)$`))
	envtest := buildSettings(t, "../../hack/envtest.sh", regexp.MustCompile(`(?m)^BUILD_ENV=\((.*)\)$`))
	for _, k := range []string{"CGO_ENABLED", "GOFIPS140"} {
		if tests[k] == "" || tests[k] != envtest[k] {
			t.Errorf("%s: the Makefile's FIPS_BUILD has %q, hack/envtest.sh's BUILD_ENV %q", k, tests[k], envtest[k])
		}
	}
	if !strings.Contains(tests["GOFLAGS"], "-trimpath") {
		t.Errorf("FIPS_BUILD builds without -trimpath (%q): hack/envtest.sh builds with it", tests["GOFLAGS"])
	}
	script, err := os.ReadFile("../../hack/envtest.sh")
	if err != nil {
		t.Fatal(err)
	}
	builds := regexp.MustCompile(`env "\$\{BUILD_ENV\[@\]\}" go build -trimpath`).FindAll(script, -1)
	if len(builds) != 2 {
		t.Errorf("hack/envtest.sh has %d go builds with BUILD_ENV and -trimpath; want 2 (etcd, kube-apiserver)", len(builds))
	}
}
