// Package version is the build stamp of the binaries. The Makefile and the Dockerfile set Version and GitCommit with
// -ldflags "-X github.com/kyma-project/kim/operator/version.Version=... -X ...GitCommit=..."; without them, the VCS
// revision the go command records in every binary built from a git checkout fills GitCommit.
//
// It imports no metrics library (the gauge of the stamp is package metric's): the release test builds a stub that
// prints the stamp for every platform of the release, and a fresh machine compiles what the stub imports once per
// platform.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
)

// Set at link time (-ldflags -X); they must stay plain string variables for that to work.
var (
	// Version is the release version, e.g. 0.2.0; "dev" for a build without a stamp.
	Version = "dev"
	// GitCommit is the commit the binary was built from.
	GitCommit = ""
	// Branch is the git branch the binary was built from ("" when not stamped).
	Branch = ""
)

// Info describes the running binary.
type Info struct {
	Version   string
	GitCommit string
	// Modified is true when the binary was built from a work tree with uncommitted changes (from the VCS stamp).
	Modified  bool
	Branch    string
	GoVersion string
	// GoOS and GoArch are the platform the binary was built for.
	GoOS, GoArch string
}

// Get returns the stamp of this binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(Info{Version: Version, GitCommit: GitCommit, Branch: Branch, GoVersion: runtime.Version(),
		GoOS: runtime.GOOS, GoArch: runtime.GOARCH}, bi)
}

// fromBuildInfo completes a link-time stamp with what the go command recorded in the binary: the VCS revision and
// whether the tree was modified (a build in a git checkout), and the version of the main module (`go install
// <module>/operator/cmd/kim@vX.Y.Z`, which has no -ldflags and no VCS data; a pseudo-version carries the commit).
// The link-time stamp wins where it is set.
func fromBuildInfo(info Info, bi *debug.BuildInfo) Info {
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.GitCommit == "" {
					info.GitCommit = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
		if v := bi.Main.Version; info.Version == "dev" && v != "" && v != "(devel)" {
			// The Makefile and the release stamp 0.2.0 for the tag v0.2.0; print the module version alike.
			info.Version = strings.TrimPrefix(v, "v")
			if rev, err := module.PseudoVersionRev(v); err == nil && info.GitCommit == "" {
				info.GitCommit = rev
			}
			if strings.HasSuffix(v, "+dirty") {
				info.Modified = true
			}
		}
	}
	if info.GitCommit == "" {
		info.GitCommit = "unknown"
	}
	return info
}

// String is the one-line form printed by --version.
func (i Info) String() string {
	commit := i.GitCommit
	if i.Modified {
		commit += "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, commit, i.GoVersion)
}

// KeysAndValues are the stamp as structured log fields.
func (i Info) KeysAndValues() []any {
	return []any{"version", i.Version, "gitCommit", i.GitCommit, "gitTreeModified", i.Modified, "goVersion", i.GoVersion}
}
