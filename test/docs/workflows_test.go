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
