package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), build events included.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// topLevel is the top-level test a (sub)test name belongs to.
func topLevel(test string) string {
	top, _, _ := strings.Cut(test, "/")
	return top
}

// pkgResult is what a report says about one package.
type pkgResult struct {
	end     string          // the package's own final action: pass, fail or skip ("" when the stream ends before it)
	ran     map[string]bool // top-level tests that started
	skipped map[string]bool // top-level tests that, or one of whose subtests, skipped
	// skippedSelf are the top-level tests that skipped themselves: a pass with a skipped subtest is a pass to a
	// judge that runs the test the same way, and the same subtest skips there too.
	skippedSelf map[string]bool
	failed      map[string]bool // top-level tests that, or one of whose subtests, failed
	noTests     bool            // go test said the package has no tests to run
}

// report is a parsed `go test -json` stream: the packages in the order they ended.
type report struct {
	pkgs  map[string]*pkgResult
	order []string
}

func readReport(r io.Reader) (*report, error) {
	rep := &report{pkgs: map[string]*pkgResult{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("line %d is not a go test -json event: %w", line, err)
		}
		rep.add(ev)
	}
	return rep, sc.Err()
}

func (r *report) add(ev event) {
	if ev.Package == "" {
		return // build output (ImportPath) belongs to no test
	}
	p := r.pkgs[ev.Package]
	if p == nil {
		p = &pkgResult{ran: map[string]bool{}, skipped: map[string]bool{}, skippedSelf: map[string]bool{}, failed: map[string]bool{}}
		r.pkgs[ev.Package] = p
	}
	if ev.Test == "" {
		switch ev.Action {
		case "pass", "fail", "skip":
			if p.end == "" {
				r.order = append(r.order, ev.Package)
			}
			p.end = ev.Action
		case "output":
			// go test's line, or the test binary's own when it ran through test2json without go test.
			if strings.Contains(ev.Output, "[no tests to run]") || strings.HasPrefix(ev.Output, "testing: warning: no tests to run") {
				p.noTests = true
			}
		}
		return
	}
	top := topLevel(ev.Test)
	switch ev.Action {
	case "run":
		p.ran[top] = true
	case "skip":
		p.skipped[top] = true
		p.skippedSelf[top] = p.skippedSelf[top] || ev.Test == top
	case "fail":
		p.failed[top] = true
	}
}

// complete returns an error unless every package of the report ended and nothing failed: a report of a failed or
// interrupted run cannot say what ran.
func (r *report) complete() error {
	if len(r.pkgs) == 0 {
		return errors.New("the report holds no package")
	}
	var problems []string
	for _, name := range sortedKeys(r.pkgs) {
		p := r.pkgs[name]
		switch {
		case p.end == "":
			problems = append(problems, name+" did not finish")
		case p.end == "fail" || len(p.failed) > 0:
			problems = append(problems, name+" failed "+strings.Join(sortedKeys(p.failed), " "))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the report is of a failed or interrupted run: %s", strings.Join(problems, "; "))
	}
	return nil
}

// group is one go test command of the rerun: the tests its -run regexp names, in the packages it lists.
type group struct {
	Run  string // -run regexp; "." runs every test of the packages
	Pkgs []string
}

// rerunGroups says which tests a run without -short still has to run after the run the report is of: per package
// the top-level tests that skipped there (a skip of the test or of one of its subtests, which is how a test marks a
// shortened form), and every test of a package that passed without starting any (its TestMain skipped them all).
// Packages without anything skipped are left out. Packages share a command (one -run regexp) unless the shared
// regexp would run again a test that passed in one of them; a package that needs all its tests gets a command of
// its own kind ("."). The groups come out in a stable order.
//
// except, when not nil, names top-level tests the command skips anyway (its -skip): they are left out, and a package
// left with nothing to run is not built at all.
func (r *report) rerunGroups(except *regexp.Regexp) ([]group, error) {
	if err := r.complete(); err != nil {
		return nil, err
	}
	type acc struct {
		names   map[string]bool
		members []member
	}
	var whole []string
	var accs []*acc
	for _, name := range sortedKeys(r.pkgs) {
		p := r.pkgs[name]
		if p.end != "pass" {
			continue // skip: no test files
		}
		if len(p.ran) == 0 {
			if !p.noTests {
				whole = append(whole, name)
			}
			continue
		}
		skipped := map[string]bool{}
		for t := range p.skipped {
			if except == nil || !except.MatchString(t) {
				skipped[t] = true
			}
		}
		if len(skipped) == 0 {
			continue
		}
		passed := map[string]bool{}
		for t := range p.ran {
			if !p.skipped[t] {
				passed[t] = true
			}
		}
		m := member{pkg: name, skipped: skipped, passed: passed}
		placed := false
		for _, a := range accs {
			if fits(a.names, a.members, m) {
				for t := range m.skipped {
					a.names[t] = true
				}
				a.members = append(a.members, m)
				placed = true
				break
			}
		}
		if !placed {
			a := &acc{names: map[string]bool{}, members: []member{m}}
			for t := range m.skipped {
				a.names[t] = true
			}
			accs = append(accs, a)
		}
	}
	var groups []group
	for _, a := range accs {
		g := group{Run: runRegexp(sortedKeys(a.names))}
		for _, m := range a.members {
			g.Pkgs = append(g.Pkgs, m.pkg)
		}
		groups = append(groups, g)
	}
	if len(whole) > 0 {
		groups = append(groups, group{Run: ".", Pkgs: whole})
	}
	return groups, nil
}

// member is a package of a rerun command: the tests that skipped in it and those that passed.
type member struct {
	pkg             string
	skipped, passed map[string]bool
}

// fits reports whether m can join a command that runs names in the packages of members: the joined regexp must not
// name a test that passed in any of them.
func fits(names map[string]bool, members []member, m member) bool {
	for t := range names {
		if m.passed[t] {
			return false
		}
	}
	for _, o := range members {
		for t := range m.skipped {
			if o.passed[t] {
				return false
			}
		}
	}
	return true
}

// runRegexp is the -run regexp that matches exactly the named top-level tests (and their subtests).
func runRegexp(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// verdicts lists "PASS|FAIL|SKIP <test>" for each top-level test of pkg whose name matches re, in name order: the
// top-level test's own verdict, as `go test -v` prints it (a skipped subtest leaves its parent's pass a pass; a failed
// one fails its parent anyway).
func (r *report) verdicts(pkg string, re *regexp.Regexp) []string {
	p := r.pkgs[pkg]
	if p == nil {
		return nil
	}
	var out []string
	for _, t := range sortedKeys(p.ran) {
		if !re.MatchString(t) {
			continue
		}
		switch {
		case p.failed[t]:
			out = append(out, "FAIL "+t)
		case p.skippedSelf[t]:
			out = append(out, "SKIP "+t)
		case p.end == "":
			out = append(out, "FAIL "+t) // the package never finished: the test's pass is not worth trusting
		default:
			out = append(out, "PASS "+t)
		}
	}
	return out
}

// sortedKeys lists a set's names in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
