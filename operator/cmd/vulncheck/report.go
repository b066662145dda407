package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// errCalled is returned when a report has a called vulnerability that is not accepted; main exits 3 on it, as
// govulncheck does.
var errCalled = errors.New("called vulnerabilities")

// The parts of govulncheck's JSON stream (-format json, protocol v1.0.0) the report reads: one message per value.
type message struct {
	Config *struct {
		ScannerVersion string `json:"scanner_version"`
		GoVersion      string `json:"go_version"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *finding `json:"finding"`
}

// finding is one finding: its trace runs from the vulnerable symbol (the first frame) to our code (the last).
// A first frame with a function makes it a called vulnerability; with only a package, an imported one; with only a
// module, a required one.
type finding struct {
	OSV          string   `json:"osv"`
	FixedVersion string   `json:"fixed_version"`
	Trace        []*frame `json:"trace"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
	} `json:"position"`
}

func (f *frame) symbol() string {
	name := f.Function
	if f.Receiver != "" {
		name = strings.TrimPrefix(f.Receiver, "*") + "." + name
	}
	if f.Package == "" {
		return name
	}
	return path.Base(f.Package) + "." + name
}

// vuln is what a report says about one vulnerability.
type vuln struct {
	id, summary, module, version, fixed string
	called, imported                    bool
	traces                              []string
}

// maxTraces is how many example traces the report prints per called vulnerability (govulncheck -show traces prints
// all of them).
const maxTraces = 3

// scan is one govulncheck run: the module it scanned, the versions it used and its vulnerabilities by ID.
type scan struct {
	name, scanner, goVersion string
	vulns                    map[string]*vuln
}

func readScan(name string, r io.Reader) (*scan, error) {
	s := &scan{name: name, vulns: map[string]*vuln{}}
	summaries := map[string]string{}
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not govulncheck's JSON output: %w", name, err)
		}
		switch {
		case m.Config != nil:
			s.scanner, s.goVersion = m.Config.ScannerVersion, m.Config.GoVersion
		case m.OSV != nil:
			summaries[m.OSV.ID] = m.OSV.Summary
		case m.Finding != nil && len(m.Finding.Trace) > 0:
			s.add(m.Finding)
		}
	}
	if s.scanner == "" {
		return nil, fmt.Errorf("%s: no govulncheck configuration in the output (did govulncheck fail?)", name)
	}
	for _, v := range s.vulns {
		v.summary = summaries[v.id]
	}
	return s, nil
}

// add records a finding under its ID and module: one vulnerability can affect several modules (golang.org/x/net
// and the standard library's copy of it, for example), each accepted or fixed on its own.
func (s *scan) add(f *finding) {
	first := f.Trace[0]
	key := f.OSV + " " + first.Module
	v := s.vulns[key]
	if v == nil {
		v = &vuln{id: f.OSV, module: first.Module}
		s.vulns[key] = v
	}
	v.version, v.fixed = first.Version, f.FixedVersion
	switch {
	case first.Function != "":
		v.called = true
		if len(v.traces) < maxTraces {
			v.traces = append(v.traces, trace(f.Trace))
		}
	case first.Package != "":
		v.imported = true
	}
}

// trace renders a called finding as "position: entry point -> ... -> vulnerable symbol" with our frame first.
func trace(frames []*frame) string {
	last := frames[len(frames)-1]
	pos := ""
	if p := last.Position; p != nil && p.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d: ", p.Filename, p.Line, p.Column)
	}
	if len(frames) == 1 {
		return pos + last.symbol()
	}
	via := ""
	if len(frames) > 2 {
		via = " -> ..."
	}
	return pos + last.symbol() + via + " -> " + frames[0].symbol()
}

// acceptance is one line of the list of called vulnerabilities that cannot be fixed now: the scanned module (the
// same vulnerable module can be fixable in one of our modules and not in the other), the vulnerability, its module
// and the reason.
type acceptance struct {
	scan, id, module, reason string
	line                     int
}

// readAccepted reads lines "<scanned module> <GO-ID> <vulnerable module> <reason>"; # starts a comment line. A reason
// is required.
func readAccepted(file string) ([]acceptance, error) {
	b, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		return nil, err
	}
	var out []acceptance
	seen := map[[3]string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[1], "GO-") {
			return nil, fmt.Errorf("%s:%d: want <scanned module> <GO-ID> <vulnerable module> <reason>", file, i+1)
		}
		key := [3]string{fields[0], fields[1], fields[2]}
		if seen[key] {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", file, i+1, strings.Join(fields[:3], " "))
		}
		seen[key] = true
		out = append(out, acceptance{scan: fields[0], id: fields[1], module: fields[2], reason: strings.Join(fields[3:], " "), line: i + 1})
	}
	return out, nil
}

// runReport is `vulncheck report`: it prints the vulnerabilities of govulncheck's JSON outputs (one file per
// module) and fails on a called one that is not accepted, or on an accepted one that no module calls any more.
func runReport(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("vulncheck report", flag.ContinueOnError)
	flags.SetOutput(stderr)
	acceptedFile := flags.String("accepted", "", "file of accepted called vulnerabilities: lines <scanned module> <GO-ID> <vulnerable module> <reason>")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() == 0 {
		return errors.New("usage: vulncheck report [-accepted file] [name=]FILE... (FILE: output of govulncheck -format json)")
	}
	var accepted []acceptance
	if *acceptedFile != "" {
		var err error
		if accepted, err = readAccepted(*acceptedFile); err != nil {
			return err
		}
	}
	var scans []*scan
	for _, arg := range flags.Args() {
		// NAME=FILE names the scan (the module); a plain FILE is named after the file.
		name, file, named := strings.Cut(arg, "=")
		if !named {
			name, file = strings.TrimSuffix(filepath.Base(arg), ".json"), arg
		}
		f, err := os.Open(filepath.Clean(file))
		if err != nil {
			return err
		}
		s, err := readScan(name, f)
		_ = f.Close()
		if err != nil {
			return err
		}
		scans = append(scans, s)
	}
	return report(scans, accepted, *acceptedFile, stdout)
}

func report(scans []*scan, accepted []acceptance, acceptedFile string, w io.Writer) error {
	used := make([]bool, len(accepted))
	acceptedFor := func(s *scan, v *vuln) *acceptance {
		for i, a := range accepted {
			if a.scan == s.name && a.id == v.id && a.module == v.module {
				used[i] = true
				return &accepted[i]
			}
		}
		return nil
	}
	var failed []string
	for _, s := range scans {
		keys := make([]string, 0, len(s.vulns))
		var called, acceptedN, imported, required int
		for key, v := range s.vulns {
			keys = append(keys, key)
			switch {
			case v.called:
				called++
			case v.imported:
				imported++
			default:
				required++
			}
		}
		sort.Strings(keys)
		var lines []string
		for _, key := range keys {
			v := s.vulns[key]
			if !v.called {
				continue
			}
			fixed := v.fixed
			if fixed == "" {
				fixed = "no fixed version"
			} else {
				fixed = "fixed in " + fixed
			}
			mod := v.module
			if v.version != "" {
				mod += "@" + v.version
			}
			lines = append(lines, fmt.Sprintf("  %s %s (%s): %s", v.id, mod, fixed, v.summary))
			for _, t := range v.traces {
				lines = append(lines, "      "+t)
			}
			if a := acceptedFor(s, v); a != nil {
				acceptedN++
				lines = append(lines, fmt.Sprintf("    ACCEPTED (%s:%d): %s", acceptedFile, a.line, a.reason))
			} else {
				failed = append(failed, s.name+": "+v.id)
				lines = append(lines, "    NOT ACCEPTED: update the module to the fixed version")
			}
		}
		_, _ = fmt.Fprintf(w, "vulncheck: %s (govulncheck %s, standard library of %s): %d called (%d accepted), "+
			"%d in imported packages but not called, %d in required modules only (per vulnerability and module)\n",
			s.name, s.scanner, s.goVersion, called, acceptedN, imported, required)
		for _, l := range lines {
			_, _ = fmt.Fprintln(w, l)
		}
	}
	var stale []string
	for i, a := range accepted {
		if !used[i] {
			stale = append(stale, fmt.Sprintf("%s:%d: %s %s %s", acceptedFile, a.line, a.scan, a.id, a.module))
		}
	}
	if len(stale) > 0 {
		_, _ = fmt.Fprintf(w, "vulncheck: accepted but no longer called (remove the lines):\n  %s\n", strings.Join(stale, "\n  "))
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("%w: %s", errCalled, strings.Join(failed, ", "))
	case len(stale) > 0:
		return fmt.Errorf("%d stale entries in %s", len(stale), acceptedFile)
	}
	return nil
}
