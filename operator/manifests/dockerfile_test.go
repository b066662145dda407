package manifests_test

import (
	"os"
	"strings"
	"testing"
)

// TestDockerfileCrossCompiles: the image's build stage runs on the builder's platform and cross-compiles for the
// platform being built (a multi-arch buildx build compiles natively instead of under emulation), every go command
// runs with the module and build caches mounted, and the final stage is the pinned distroless image.
func TestDockerfileCrossCompiles(t *testing.T) {
	raw, err := os.ReadFile(repoPath("Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Join continued lines: one instruction per entry.
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	var from, runs []string
	for _, line := range strings.Split(text, "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "FROM":
			from = append(from, line)
		case f[0] == "RUN":
			runs = append(runs, line)
		}
	}
	if len(from) != 2 || !strings.HasPrefix(from[0], "FROM --platform=$BUILDPLATFORM golang:") || !strings.HasSuffix(from[0], " AS build") {
		t.Errorf("stages %q; want the build stage FROM --platform=$BUILDPLATFORM golang:... AS build, then the image", from)
	}
	if len(from) == 2 && (!strings.Contains(from[1], "distroless") || !strings.Contains(from[1], "@sha256:")) {
		t.Errorf("final stage %q; want distroless pinned by digest", from[1])
	}
	builds := 0
	for _, r := range runs {
		if !strings.Contains(r, "--mount=type=cache,target=/go/pkg/mod") {
			t.Errorf("%q runs go without the module cache mount", r)
		}
		for _, part := range strings.Split(r, "&&") {
			if !strings.Contains(part, "go build") {
				continue
			}
			builds++
			if !strings.Contains(part, "GOOS=${TARGETOS}") || !strings.Contains(part, "GOARCH=${TARGETARCH}") {
				t.Errorf("%q does not build for the target platform", strings.TrimSpace(part))
			}
		}
		if strings.Contains(r, "go build") && !strings.Contains(r, "--mount=type=cache,target=/root/.cache/go-build") {
			t.Errorf("%q builds without the build cache mount", r)
		}
	}
	if builds != 2 {
		t.Errorf("%d go builds, want the manager and the probe", builds)
	}
}
