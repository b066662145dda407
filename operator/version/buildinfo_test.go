package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFromBuildInfo: a binary without a link-time stamp reports what the go command recorded: the module version of
// `go install ...@vX.Y.Z` (with the commit a pseudo-version carries), the VCS revision of a build in a checkout; the
// Makefile's stamp wins over both.
func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0109df2abcde0109df2abcde0109df2abcde0109"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		reason   string
		stamp    Info
		main     string
		settings []debug.BuildSetting
		want     Info
	}{
		{reason: "go install of a release tag: its version, no commit to know",
			stamp: Info{Version: "dev"}, main: "v0.2.0",
			want: Info{Version: "0.2.0", GitCommit: "unknown"}},
		{reason: "go install of a pseudo-version: the commit it names",
			stamp: Info{Version: "dev"}, main: "v0.0.0-20261204225530-0109df2abcde",
			want: Info{Version: "0.0.0-20261204225530-0109df2abcde", GitCommit: "0109df2abcde"}},
		{reason: "go build in a checkout (Go 1.24+ stamps a pseudo-version): the full revision, modified",
			stamp: Info{Version: "dev"}, main: "v0.0.0-20261204225530-0109df2abcde+dirty", settings: vcs,
			want: Info{Version: "0.0.0-20261204225530-0109df2abcde+dirty", GitCommit: "0109df2abcde0109df2abcde0109df2abcde0109", Modified: true}},
		{reason: "go run or a test binary: (devel) is no version",
			stamp: Info{Version: "dev"}, main: "(devel)",
			want: Info{Version: "dev", GitCommit: "unknown"}},
		{reason: "the Makefile's stamp wins",
			stamp: Info{Version: "0.1.0", GitCommit: "abc123"}, main: "v0.0.0-20261204225530-0109df2abcde", settings: vcs,
			want: Info{Version: "0.1.0", GitCommit: "abc123", Modified: true}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kyma-project/kim", Version: tc.main}, Settings: tc.settings}
			if diff := cmp.Diff(tc.want, fromBuildInfo(tc.stamp, bi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
