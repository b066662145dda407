package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Layout of a v1 database (https://go.dev/security/vuln/database#api) as govulncheck reads it from a file:// URL:
// the indexes under index/ and one OSV entry per ID under ID/, all plain .json (the .json.gz twins are only for
// HTTP). govulncheck recognises the layout by index/modules.json.
const (
	indexDir = "index"
	idDir    = "ID"
)

// osvEntry is the part of an OSV entry the indexes are made of. The entry itself is copied unchanged.
type osvEntry struct {
	ID       string      `json:"id"`
	Modified time.Time   `json:"modified"`
	Aliases  []string    `json:"aliases,omitempty"`
	Affected []osvAffect `json:"affected"`
}

type osvAffect struct {
	Package struct {
		Name string `json:"name"`
	} `json:"package"`
	Ranges []osvRange `json:"ranges"`
}

type osvRange struct {
	Type   string `json:"type"`
	Events []struct {
		Introduced string `json:"introduced,omitempty"`
		Fixed      string `json:"fixed,omitempty"`
	} `json:"events"`
}

// dbMeta is index/db.json.
type dbMeta struct {
	Modified time.Time `json:"modified"`
}

// moduleMeta is one element of index/modules.json: a module and the entries that affect it.
type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	// Fixed is the version from which on no version is affected; govulncheck skips the entry for a module at or
	// above it without reading the entry. Empty when there is no such version.
	Fixed string `json:"fixed,omitempty"`
}

// vulnMeta is one element of index/vulns.json.
type vulnMeta struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

// Summary tells what Build wrote.
type Summary struct {
	Entries  int
	Modules  int
	Modified time.Time
}

// Build writes the v1 database of the OSV entries in src (files named <ID>.json; other files are ignored) into dst,
// which is created if missing. index/db.json's modified is the newest modified time of an entry, or notBefore if
// that is later: the entries of golang.org/x/vulndb's data/osv carry no modification times (the published database
// takes them from the repository's history), so the caller passes the time of the vulndb commit.
func Build(src, dst string, notBefore time.Time) (Summary, error) {
	files, err := os.ReadDir(src)
	if err != nil {
		return Summary{}, err
	}
	for _, d := range []string{indexDir, idDir} {
		if err := os.MkdirAll(filepath.Join(dst, d), 0o750); err != nil {
			return Summary{}, err
		}
	}
	srcFS := os.DirFS(src)
	db := dbMeta{Modified: notBefore.UTC()}
	modules := map[string]*moduleMeta{}
	var vulns []vulnMeta
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") {
			continue
		}
		raw, err := fs.ReadFile(srcFS, f.Name())
		if err != nil {
			return Summary{}, err
		}
		var e osvEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return Summary{}, fmt.Errorf("%s: %w", f.Name(), err)
		}
		if e.ID == "" || f.Name() != e.ID+".json" {
			return Summary{}, fmt.Errorf("%s: the entry's id is %q; entries must be named <id>.json", f.Name(), e.ID)
		}
		if err := os.WriteFile(filepath.Join(dst, idDir, f.Name()), raw, 0o600); err != nil {
			return Summary{}, err
		}
		if e.Modified.After(db.Modified) {
			db.Modified = e.Modified.UTC()
		}
		vulns = append(vulns, vulnMeta{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &moduleMeta{Path: a.Package.Name}
				modules[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: latestFixed(a.Ranges)})
		}
	}
	if len(vulns) == 0 {
		return Summary{}, fmt.Errorf("no OSV entries in %s", src)
	}

	moduleList := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		sort.SliceStable(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		moduleList = append(moduleList, m)
	}
	sort.Slice(moduleList, func(i, j int) bool { return moduleList[i].Path < moduleList[j].Path })
	sort.Slice(vulns, func(i, j int) bool { return vulns[i].ID < vulns[j].ID })

	// db.json last: a directory with it is complete.
	for _, out := range []struct {
		name string
		v    any
	}{{"modules.json", moduleList}, {"vulns.json", vulns}, {"db.json", db}} {
		b, err := json.Marshal(out.v)
		if err != nil {
			return Summary{}, err
		}
		if err := os.WriteFile(filepath.Join(dst, indexDir, out.name), b, 0o600); err != nil {
			return Summary{}, err
		}
	}
	return Summary{Entries: len(vulns), Modules: len(moduleList), Modified: db.Modified}, nil
}

// latestFixed is the highest fixed version of the SEMVER ranges, or "" when a range introduces the vulnerability
// again above it (or nothing is fixed): only then are all versions from it on unaffected. OSV versions have no "v".
func latestFixed(ranges []osvRange) string {
	var fixed string
	for _, r := range ranges {
		if r.Type != "SEMVER" {
			continue
		}
		for _, e := range r.Events {
			if e.Fixed != "" && versionLess(fixed, e.Fixed) {
				fixed = e.Fixed
			}
		}
		for _, e := range r.Events {
			if e.Introduced != "" && e.Introduced != "0" && versionLess(fixed, e.Introduced) {
				return ""
			}
		}
	}
	return fixed
}

// versionLess compares OSV versions (semver without the "v"); "" is below every version.
func versionLess(a, b string) bool {
	if a == "" {
		return b != ""
	}
	return semver.Compare("v"+a, "v"+b) < 0
}
