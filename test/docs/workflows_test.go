package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// usesLine is a step's action reference: `uses: owner/repo[/path]@ref # comment`.
var usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*([^\s@#]+)@([^\s#]+)\s*(#.*)?$`)

// fullSHA is a commit SHA as GitHub resolves it; a tag or branch can be moved under a workflow, a SHA cannot.
var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestWorkflowActionsArePinnedByCommitSHA: every action a workflow uses is pinned by its full commit SHA, with the
// version it stands for in a comment (what Dependabot updates), so a moved tag never runs other code in CI.
func TestWorkflowActionsArePinnedByCommitSHA(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		uses := 0
		for i, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, "uses:") {
				continue
			}
			m := usesLine.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s:%d: %q is not `uses: owner/repo@<sha> # <version>`", filepath.Base(f), i+1, strings.TrimSpace(line))
				continue
			}
			uses++
			if !fullSHA.MatchString(m[2]) {
				t.Errorf("%s:%d: %s is pinned to %q, not a commit SHA", filepath.Base(f), i+1, m[1], m[2])
			}
			if !regexp.MustCompile(`^#\s*v\d`).MatchString(m[3]) {
				t.Errorf("%s:%d: %s@%s has no version comment (# vX.Y.Z)", filepath.Base(f), i+1, m[1], m[2])
			}
		}
		if uses == 0 {
			t.Errorf("%s uses no action: the check read nothing", filepath.Base(f))
		}
	}
}

// fromImage is the image of a Dockerfile FROM line (after --platform=...), and the stage it names.
var fromImage = regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+(?i:AS)\s+(\S+))?`)

// digestPinned: an image reference with a sha256 digest.
var digestPinned = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// unpinnedBaseImages returns the FROM images of a Dockerfile that are neither pinned by digest nor scratch nor an
// earlier stage of the same file.
func unpinnedBaseImages(dockerfile string) []string {
	stages := map[string]bool{"scratch": true}
	var out []string
	for _, m := range fromImage.FindAllStringSubmatch(dockerfile, -1) {
		if !stages[m[1]] && !digestPinned.MatchString(m[1]) {
			out = append(out, m[1])
		}
		if m[2] != "" {
			stages[m[2]] = true
		}
	}
	return out
}

// TestBaseImagesArePinnedByDigest: every base image of the repository's Dockerfiles is pinned by digest, so a
// moved tag cannot change what is built (Dependabot's docker updates move the digest deliberately).
func TestBaseImagesArePinnedByDigest(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "*Dockerfile"))
	if err != nil || len(files) < 2 {
		t.Fatalf("Dockerfiles %v (%v): want the manager's and the bundle's", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range unpinnedBaseImages(string(data)) {
			t.Errorf("%s: base image %s is not pinned by digest", filepath.Base(f), img)
		}
	}
	bad := unpinnedBaseImages("FROM golang:1.26 AS build\nFROM build AS test\nFROM --platform=$BUILDPLATFORM alpine@sha256:" +
		strings.Repeat("a", 64) + "\nFROM scratch\nFROM gcr.io/distroless/static:nonroot\n")
	if strings.Join(bad, " ") != "golang:1.26 gcr.io/distroless/static:nonroot" {
		t.Errorf("the check finds %v in a made-up Dockerfile, want the two unpinned tags", bad)
	}
}
