package ahead

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// makefile is the part of the Makefile this test reads: each rule's prerequisites and recipe lines (continuations
// joined), and the define blocks a recipe may expand.
type makefile struct {
	prereqs map[string][]string
	recipes map[string][]string
	defines map[string][]string
}

var (
	ruleLine = regexp.MustCompile(`^([^\t#=:][^=:]*?)\s*:([^=].*)?$`)
	subMake  = regexp.MustCompile(`\$\(MAKE\)(.*)`)
)

func parseMakefile(text string) makefile {
	m := makefile{prereqs: map[string][]string{}, recipes: map[string][]string{}, defines: map[string][]string{}}
	text = strings.ReplaceAll(text, "\\\n", " ")
	var rule, define string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case define != "":
			if strings.TrimSpace(line) == "endef" {
				define = ""
			} else {
				m.defines[define] = append(m.defines[define], line)
			}
		case strings.HasPrefix(line, "define "):
			define = strings.TrimSpace(strings.TrimPrefix(line, "define "))
		case strings.HasPrefix(line, "\t") && rule != "":
			m.recipes[rule] = append(m.recipes[rule], line)
		default:
			rule = ""
			g := ruleLine.FindStringSubmatch(line)
			if g == nil || strings.HasPrefix(g[1], ".") {
				continue
			}
			prereqs, _, _ := strings.Cut(g[2], "##")
			for _, target := range strings.Fields(g[1]) {
				m.prereqs[target] = append(m.prereqs[target], strings.Fields(prereqs)...)
				rule = target
			}
		}
	}
	return m
}

// reachable is every rule make runs for target: its prerequisites and the targets its recipes pass to $(MAKE).
func (m makefile) reachable(target string) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		next := m.prereqs[t]
		for _, line := range m.recipes[t] {
			if g := subMake.FindStringSubmatch(line); g != nil {
				next = append(next, strings.Fields(g[1])...)
			}
		}
		for _, n := range next {
			if _, ok := m.prereqs[n]; ok {
				visit(n)
			}
		}
	}
	visit(target)
	var out []string
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// TestEveryGoTestOfMakeTestSkipsVet: lint runs go vet's analyzers on every package (golangci-lint's govet), so each
// go test that make test runs passes $(TEST_VET) (-vet=off there). Without it, go test vets the tested package and,
// on a fresh machine, every package it imports for their facts: about 170 s of CPU each for the go install and OLM
// tests (some 2,100 packages) in a cold run.
func TestEveryGoTestOfMakeTestSkipsVet(t *testing.T) {
	m := parseMakefile(string(read(t, "../../Makefile")))
	rules := m.reachable("test")
	for _, want := range []string{"lint", "release-check", "test-fips", "test-all", "verify-mutants", "test-olm", "test-go-install", "vulncheck", "test-demo"} {
		if !slices.Contains(rules, want) {
			t.Fatalf("the rules make test reaches (%v) lack %s: the Makefile's parser here no longer reads it", rules, want)
		}
	}
	goTests := 0
	for _, rule := range rules {
		for _, line := range m.recipes[rule] {
			lines := []string{line}
			for name, body := range m.defines {
				if strings.Contains(line, "$("+name+")") {
					lines = append(lines, body...)
				}
			}
			for _, l := range lines {
				if !strings.Contains(l, "$(GO) test ") {
					continue
				}
				goTests++
				if !strings.Contains(l, "$(TEST_VET)") {
					t.Errorf("make test runs %s, whose go test lacks $(TEST_VET): %s", rule, strings.TrimSpace(l))
				}
			}
		}
	}
	if goTests < 8 {
		t.Errorf("found %d go test commands in the rules make test reaches; want the 8 or more the Makefile has", goTests)
	}
}
