package archtest_test

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

// shadowedNames are package names an import would shadow next to a package the operator uses under that name:
// Go's runtime, controller-runtime's cluster.
var shadowedNames = []string{"runtime", "cluster"}

// namingViolations returns the shipped packages (import paths) named after a domain package of core/domain while
// not being it (a controller or adapter called like its domain twin forces an alias at every import of both), or
// named like a package they would shadow.
func namingViolations(paths []string) []string {
	const domain = module + "core/domain/"
	domainNames := map[string]bool{}
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, domain); ok && !strings.Contains(rest, "/") {
			domainNames[rest] = true
		}
	}
	var bad []string
	for _, p := range paths {
		if !productFloor(p) {
			continue
		}
		name := path.Base(p)
		twin := domainNames[name] && !strings.HasPrefix(p, domain)
		if twin || slices.Contains(shadowedNames, name) {
			bad = append(bad, p)
		}
	}
	return bad
}

// TestPackagesAreNotNamedAfterTheirDomainTwin: no shipped package outside core/domain shares a name with a domain
// package, and none is called runtime or cluster (issue 28: one vocabulary).
func TestPackagesAreNotNamedAfterTheirDomainTwin(t *testing.T) {
	var paths []string
	for _, p := range archtest.List(t, module+"...") {
		if strings.HasPrefix(p.ImportPath, module) {
			paths = append(paths, p.ImportPath)
		}
	}
	if len(paths) < 40 {
		t.Fatalf("only %d packages listed: the check would prove nothing", len(paths))
	}
	for _, p := range namingViolations(paths) {
		t.Errorf("%s: named after a domain package or a package it shadows; name it for what it does (e.g. the controller's kind)", p)
	}
	// The rule can fail: the names this project had before.
	was := append(slices.Clone(paths), module+"operator/controllers/auditlog", module+"operator/controllers/runtime")
	if got := namingViolations(was); len(got) != 2 {
		t.Errorf("the old names gave %v; want the two of them", got)
	}
}
