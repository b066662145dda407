package tools

import (
	"testing"
)

// recorder is a testing.TB that records how a test ended instead of ending this one.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Skip(...any)           { r.skipped = true }

func TestAMissingToolFailsUnderCIAndSkipsOutside(t *testing.T) {
	for _, tc := range []struct {
		ci                 string
		wantFail, wantSkip bool
	}{
		{ci: "true", wantFail: true},
		{ci: "1", wantFail: true},
		{ci: "", wantSkip: true},
		{ci: "false", wantSkip: true},
	} {
		t.Setenv("CI", tc.ci)
		r := &recorder{TB: t}
		Require(r, "kim-no-such-tool", "none exists")
		if r.failed != tc.wantFail || r.skipped != tc.wantSkip {
			t.Errorf("CI=%q: failed %t skipped %t, want %t %t", tc.ci, r.failed, r.skipped, tc.wantFail, tc.wantSkip)
		}
		t.Setenv("KIM_NO_SUCH_VARIABLE", "")
		r = &recorder{TB: t}
		RequireEnv(r, "KIM_NO_SUCH_VARIABLE", "none is set")
		if r.failed != tc.wantFail || r.skipped != tc.wantSkip {
			t.Errorf("CI=%q, no variable: failed %t skipped %t, want %t %t", tc.ci, r.failed, r.skipped, tc.wantFail, tc.wantSkip)
		}
		r = &recorder{TB: t}
		RequireFile(r, "/kim-no-such-file", "none exists")
		if r.failed != tc.wantFail || r.skipped != tc.wantSkip {
			t.Errorf("CI=%q, no file: failed %t skipped %t, want %t %t", tc.ci, r.failed, r.skipped, tc.wantFail, tc.wantSkip)
		}
		t.Setenv("KUBEBUILDER_ASSETS", "")
		r = &recorder{TB: t}
		RequireAssets(r)
		if r.failed != tc.wantFail || r.skipped != tc.wantSkip {
			t.Errorf("CI=%q, no assets: failed %t skipped %t, want %t %t", tc.ci, r.failed, r.skipped, tc.wantFail, tc.wantSkip)
		}
	}
	t.Setenv("KIM_SOME_VARIABLE", "set")
	if got := RequireEnv(t, "KIM_SOME_VARIABLE", "set above"); got != "set" {
		t.Errorf("RequireEnv = %q, want the value", got)
	}
	if got := Require(t, "sh", "the shell"); got == "" {
		t.Error("sh not found")
	}
}
