package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// pkgOutput is the output of one package while it runs: its own lines and those of each top-level test that has not
// passed or skipped yet.
type pkgOutput struct {
	own             []string
	tests           map[string][]string
	order           []string
	passed, skipped int
}

// summary turns `go test -json` into the console report: one line per package, and in full the output of every test
// that did not pass and of every failed package.
type summary struct {
	// mu serialises the commands that run at the same time: their events, the console and the stream's file.
	mu                        sync.Mutex
	pkgs                      map[string]*pkgOutput
	packages, passed, skipped int
	failed                    bool
	start                     time.Time
	// elapsed is the time of each package that finished, in seconds.
	elapsed map[string]float64
}

func (s *summary) line() string {
	verdict := "ok"
	if s.failed {
		verdict = "FAIL"
	}
	return fmt.Sprintf("testreport: %s: %d packages, %d top-level tests passed, %d skipped, %s", verdict, s.packages,
		s.passed, s.skipped, time.Since(s.start).Round(time.Second))
}

// run runs one go test -json command: the stream goes to file, the report to console.
func (s *summary) run(command []string, file io.Writer, console io.Writer) error {
	return s.stream(exec.Command(command[0], command[1:]...), file, console)
}

// stream runs a command whose output is a go test -json stream (go test, or test2json running a test binary).
func (s *summary) stream(cmd *exec.Cmd, file io.Writer, console io.Writer) error {
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := s.consume(stdout, file, console); err != nil {
		_ = cmd.Wait()
		return err
	}
	if err := cmd.Wait(); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.failed = true
		_, _ = fmt.Fprintf(console, "testreport: %s: %v\n", strings.Join(cmd.Args[:min(len(cmd.Args), 3)], " "), err)
	}
	return nil
}

func (s *summary) consume(r io.Reader, file io.Writer, console io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		if err := s.take(sc.Bytes(), file, console); err != nil {
			return err
		}
	}
	return sc.Err()
}

// take takes one line of a command's output: into the stream's file, and as an event into the report.
func (s *summary) take(raw []byte, file io.Writer, console io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := file.Write(append(raw, '\n')); err != nil {
		return err
	}
	var ev event
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
		_, _ = fmt.Fprintln(console, string(raw)) // not an event: show it as it is
		return nil
	}
	s.event(ev, console)
	return nil
}

func (s *summary) event(ev event, console io.Writer) {
	switch {
	case ev.ImportPath != "" && ev.Package == "":
		if ev.Action == "build-output" {
			_, _ = fmt.Fprint(console, ev.Output)
		}
		if ev.Action == "build-fail" {
			s.failed = true
		}
		return
	case ev.Package == "":
		return
	}
	if s.pkgs == nil {
		s.pkgs = map[string]*pkgOutput{}
	}
	p := s.pkgs[ev.Package]
	if p == nil {
		p = &pkgOutput{tests: map[string][]string{}}
		s.pkgs[ev.Package] = p
	}
	if ev.Test != "" {
		top := topLevel(ev.Test)
		switch {
		case ev.Action == "output":
			if _, ok := p.tests[top]; !ok {
				p.order = append(p.order, top)
			}
			p.tests[top] = append(p.tests[top], ev.Output)
		case ev.Test == top && ev.Action == "pass":
			p.passed++
			delete(p.tests, top)
		case ev.Test == top && ev.Action == "skip":
			p.skipped++
			delete(p.tests, top)
		}
		return
	}
	switch ev.Action {
	case "output":
		p.own = append(p.own, ev.Output)
	case "pass", "fail", "skip":
		if ev.Action != "skip" {
			if s.elapsed == nil {
				s.elapsed = map[string]float64{}
			}
			s.elapsed[ev.Package] = ev.Elapsed
		}
		s.packages++
		s.passed += p.passed
		s.skipped += p.skipped
		s.finish(ev, p, console)
		delete(s.pkgs, ev.Package)
	}
}

// finish prints the package's line; for a failed package first the whole output of each top-level test that did not
// pass or skip (failed, or still running when the package ended) and the package's own output.
func (s *summary) finish(ev event, p *pkgOutput, console io.Writer) {
	switch ev.Action {
	case "skip":
		_, _ = fmt.Fprintf(console, "?    %s [no test files]\n", ev.Package)
	case "pass":
		_, _ = fmt.Fprintf(console, "ok   %s %.2fs (%d passed, %d skipped)\n", ev.Package, ev.Elapsed, p.passed, p.skipped)
	case "fail":
		s.failed = true
		for _, t := range p.order {
			if lines, ok := p.tests[t]; ok {
				_, _ = fmt.Fprint(console, strings.Join(lines, ""))
			}
		}
		_, _ = fmt.Fprint(console, strings.Join(p.own, ""))
		_, _ = fmt.Fprintf(console, "FAIL %s %.2fs\n", ev.Package, ev.Elapsed)
	}
}
