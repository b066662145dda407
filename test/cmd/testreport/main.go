// Command testreport runs `go test -json`, prints it as a short report and keeps the stream, so a later stage can
// run only what an earlier one did not (make test-fips, make test-all) and the safety mutants' judge can take the
// baseline of an integration test from a run that already made it (hack/safety-mutants.sh).
//
//	testreport run -o FILE [-rerun-skipped REPORT] [-durations FILE [-durations-seed SEED]] [-keep-binaries DIR | -binaries DIR] -- go test -json [flags] [packages]
//	    Runs the command and prints one line per package (ok, FAIL, ?) and the whole output of every test that did
//	    not pass, build errors included. FILE (the go test -json stream) is written only when every test passed and
//	    the command succeeded; an old FILE is removed first. With -rerun-skipped, REPORT must be the complete report
//	    of an earlier successful run (it fails otherwise): the command is run, with `-run <regexp> <packages>`
//	    appended, once per group of packages that skipped tests there, for just those top-level tests (see plan);
//	    the commands run at the same time. With -durations, the packages of a command are listed longest first by
//	    the times the file holds, and the file is updated with this run's; a package it has no time for is ordered
//	    by SEED's (committed times of a typical run, for a fresh machine).
//	    With -keep-binaries DIR, go test keeps a copy of each test binary it links in DIR (emptied first). With
//	    -binaries DIR, the packages whose binary an earlier run of the same build kept there run from it, through
//	    test2json in the package's directory, instead of being linked again; the others, and a command with a flag
//	    that changes the build, go to go test.
//	testreport plan REPORT
//	    Prints what -rerun-skipped would run: one line per command, the -run regexp and the packages.
//	testreport verdicts -pkg IMPORTPATH -run REGEXP REPORT...
//	    Prints "PASS|FAIL|SKIP <test>" for each top-level test of the package whose name matches REGEXP.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "plan":
		err = planCmd(os.Args[2:])
	case "verdicts":
		err = verdictsCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testreport run -o FILE [-rerun-skipped REPORT] [-durations FILE [-durations-seed SEED]] [-keep-binaries DIR | -binaries DIR] -- go test -json ... | plan REPORT | verdicts -pkg IMPORTPATH -run REGEXP REPORT...")
	os.Exit(2)
}

func loadReports(files ...string) (*report, error) {
	rep := &report{pkgs: map[string]*pkgResult{}}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		one, err := readReport(fh)
		_ = fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rep.order = append(rep.order, one.order...)
		for name, p := range one.pkgs {
			rep.pkgs[name] = p
		}
	}
	return rep, nil
}

// planFrom reads the report of the earlier run and the commands to run after it; a missing, failed or incomplete
// report is an error, never an empty plan.
func planFrom(file string, except *regexp.Regexp) ([]group, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("the report of the earlier run is missing (%w); it is written only when every test of that run passed (make test-fips)", err)
	}
	rep, err := loadReports(file)
	if err != nil {
		return nil, err
	}
	groups, err := rep.rerunGroups(except)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("%s: no test skipped there, so nothing would run; a -short run of this repository skips its integration tests, so this cannot be its report", file)
	}
	return groups, nil
}

// skipOf is the go test command's -skip pattern as far as it speaks of top-level tests, nil when it has none or one
// with a subtest level ("/"), which is then left to go test alone.
func skipOf(command []string) (*regexp.Regexp, error) {
	var pattern string
	for i, a := range command {
		switch {
		case (a == "-skip" || a == "--skip") && i+1 < len(command):
			pattern = command[i+1]
		case strings.HasPrefix(a, "-skip="), strings.HasPrefix(a, "--skip="):
			pattern = a[strings.Index(a, "=")+1:]
		}
	}
	if pattern == "" || strings.Contains(pattern, "/") {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("the command's -skip %q: %w", pattern, err)
	}
	return re, nil
}

func planCmd(args []string) error {
	if len(args) != 1 {
		usage()
	}
	groups, err := planFrom(args[0], nil)
	if err != nil {
		return err
	}
	for _, g := range groups {
		fmt.Printf("-run '%s' %s\n", g.Run, strings.Join(g.Pkgs, " "))
	}
	return nil
}

func verdictsCmd(args []string) error {
	fs := flag.NewFlagSet("verdicts", flag.ExitOnError)
	pkg := fs.String("pkg", "", "import path of the package")
	run := fs.String("run", "", "regexp of top-level test names")
	_ = fs.Parse(args)
	if *pkg == "" || *run == "" || fs.NArg() == 0 {
		usage()
	}
	re, err := regexp.Compile(*run)
	if err != nil {
		return err
	}
	rep, err := loadReports(fs.Args()...)
	if err != nil {
		return err
	}
	for _, v := range rep.verdicts(*pkg, re) {
		fmt.Println(v)
	}
	return nil
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	out := fs.String("o", "", "file the go test -json stream is written to when everything passed")
	after := fs.String("rerun-skipped", "", "report of an earlier run: run only what skipped there")
	timesFile := fs.String("durations", "", "file of the packages' last run times: with -rerun-skipped the longest are listed first; updated after the run")
	seedFile := fs.String("durations-seed", "", "file of typical run times: orders the packages -durations has no time for (a fresh machine)")
	keep := fs.String("keep-binaries", "", "directory go test keeps each test binary it links in (emptied first)")
	binaries := fs.String("binaries", "", "directory of test binaries kept by an earlier run of the same build: its packages run from them")
	_ = fs.Parse(args)
	command := fs.Args()
	if *out == "" || len(command) == 0 {
		usage()
	}
	if *keep != "" && *binaries != "" {
		return errors.New("-keep-binaries and -binaries: a run either keeps its binaries or runs kept ones")
	}
	if err := os.Remove(*out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	times, seed := durations{}, durations{}
	if *timesFile != "" {
		var err error
		if times, err = loadDurations(*timesFile); err != nil {
			return err
		}
	}
	if *seedFile != "" {
		var err error
		if seed, err = loadDurations(*seedFile); err != nil {
			return err
		}
	}
	ranking := times.withSeed(seed)
	runs := [][]string{command}
	if *keep != "" {
		if *after != "" {
			return errors.New("-keep-binaries: a run of what skipped links only some binaries; keep those of the whole run")
		}
		var err error
		if runs, err = keepBinaries(command, *keep); err != nil {
			return err
		}
	}
	if *after != "" {
		except, err := skipOf(command)
		if err != nil {
			return err
		}
		groups, err := planFrom(*after, except)
		if err != nil {
			return err
		}
		runs = runs[:0]
		pkgs := 0
		for _, g := range groups {
			ranking.order(g.Pkgs)
			runs = append(runs, append(append(append([]string(nil), command...), "-run", g.Run), g.Pkgs...))
			pkgs += len(g.Pkgs)
		}
		fmt.Printf("testreport: running what skipped in %s: %d packages in %d go test commands\n", *after, pkgs, len(groups))
		for _, g := range groups {
			fmt.Printf("testreport:   -run '%s' %s\n", g.Run, strings.Join(g.Pkgs, " "))
		}
	}
	tmp := *out + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	// The commands run at the same time: a small one (a package run whole) beside the long one instead of after it.
	var starts []func() error
	sum := &summary{start: time.Now()}
	for _, c := range runs {
		if *binaries == "" {
			starts = append(starts, func() error { return sum.run(c, f, os.Stdout) })
			continue
		}
		split, how, err := splitByBinaries(c, *binaries)
		if err != nil {
			return err
		}
		fmt.Printf("testreport: %s\n", how)
		if len(split.pkgs) > 0 {
			starts = append(starts, func() error { return split.run(sum, f, os.Stdout) })
		}
		if split.rest != nil {
			starts = append(starts, func() error { return sum.run(split.rest, f, os.Stdout) })
		}
	}
	errs := make(chan error, len(starts))
	for _, start := range starts {
		go func() { errs <- start() }()
	}
	var runErr error
	for range starts {
		runErr = errors.Join(runErr, <-errs)
	}
	if *timesFile != "" {
		if err := times.save(*timesFile, sum.elapsed); err != nil {
			fmt.Fprintf(os.Stderr, "testreport: keeping the packages' run times: %v\n", err)
		}
	}
	if runErr != nil {
		return runErr
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Println(sum.line())
	if sum.failed {
		failed := *out + ".failed"
		_ = os.Rename(tmp, failed)
		return fmt.Errorf("tests failed; the stream is in %s, not in %s", failed, *out)
	}
	return os.Rename(tmp, *out)
}
