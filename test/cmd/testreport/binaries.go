package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A go test command links every test binary again, even when an earlier go test of the same build linked the same
// one minutes before (go test keeps no linked test binary in its cache): for the integration packages that is about
// 140 s of CPU per run. So the -short run keeps its binaries (go test -o DIR/), and the run after it starts them
// itself, each through test2json in its package's directory as go test would, instead of building them again.

// goTest is a go test -json command taken apart: the test binary's flags its own flags translate to, how many
// packages it runs at once, and its package patterns.
type goTest struct {
	goFlags   []string // the command's flags as given
	testFlags []string
	parallel  int
	patterns  []string
}

// parseGoTest takes apart `go test -json [flags] [packages]`. A flag it does not know (one that changes the build,
// such as -race or -tags, or one the test binary would need in another form) is an error: the caller then leaves
// the command to go test.
func parseGoTest(command []string) (goTest, error) {
	if len(command) < 2 || filepath.Base(command[0]) != "go" || command[1] != "test" {
		return goTest{}, errors.New("not a go test command")
	}
	gt := goTest{parallel: runtime.GOMAXPROCS(0)}
	json := false
	args := command[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			gt.patterns = append(gt.patterns, a)
			continue
		}
		first := i
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		switch name {
		case "json":
			json = true
		case "v":
			// -json already runs the binary verbosely (-test.v=test2json).
		case "short", "failfast":
			gt.testFlags = append(gt.testFlags, "-test."+name)
		case "count", "timeout", "run", "skip":
			v, err := takeValue()
			if err != nil {
				return goTest{}, err
			}
			gt.testFlags = append(gt.testFlags, "-test."+name+"="+v)
		case "vet":
			// A build step: the kept binaries were built by a command whose vet had run (or was off).
			if _, err := takeValue(); err != nil {
				return goTest{}, err
			}
		case "p":
			v, err := takeValue()
			if err != nil {
				return goTest{}, err
			}
			if gt.parallel, err = strconv.Atoi(v); err != nil || gt.parallel < 1 {
				return goTest{}, fmt.Errorf("-p %q", v)
			}
		default:
			return goTest{}, fmt.Errorf("the flag %s", a)
		}
		gt.goFlags = append(gt.goFlags, args[first:i+1]...)
	}
	if !json {
		return goTest{}, errors.New("without -json")
	}
	return gt, nil
}

// keepBinaries returns the go test commands that keep a copy of each test binary they link in dir: go test -o DIR/
// names a binary after the last element of its import path and refuses two packages of one name, so the packages are
// split into commands without such a pair, each keeping its binaries in a directory of its own (dir/1, dir/2, ...),
// and dir/index says which binary is whose. dir is emptied first: binaries of an earlier run must not pass for this
// one's.
func keepBinaries(command []string, dir string) ([][]string, error) {
	gt, err := parseGoTest(command)
	if err != nil {
		return nil, fmt.Errorf("-keep-binaries: %w", err)
	}
	pkgs, err := listPackages(command[0], gt.patterns)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	var sets [][]pkgDir
	var index strings.Builder
	for _, p := range pkgs {
		k := 0
		for k < len(sets) && slices.ContainsFunc(sets[k], func(o pkgDir) bool { return path.Base(o.importPath) == path.Base(p.importPath) }) {
			k++
		}
		if k == len(sets) {
			sets = append(sets, nil)
		}
		sets[k] = append(sets[k], p)
		fmt.Fprintf(&index, "%s\t%d/%s.test\n", p.importPath, k+1, path.Base(p.importPath))
	}
	var commands [][]string
	for k, set := range sets {
		out, err := filepath.Abs(filepath.Join(dir, strconv.Itoa(k+1)))
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		c := append([]string{command[0], command[1], "-o", out + string(filepath.Separator)}, gt.goFlags...)
		for _, p := range set {
			c = append(c, p.importPath)
		}
		commands = append(commands, c)
	}
	return commands, os.WriteFile(filepath.Join(dir, "index"), []byte(index.String()), 0o644)
}

// pkgDir is a package to test: its import path and its directory.
type pkgDir struct{ importPath, dir string }

// listPackages resolves package patterns as go test would, in their order.
func listPackages(goCmd string, patterns []string) ([]pkgDir, error) {
	cmd := exec.Command(goCmd, append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
	}
	var pkgs []pkgDir
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		ip, dir, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		pkgs = append(pkgs, pkgDir{importPath: ip, dir: dir})
	}
	return pkgs, nil
}

// binaryRuns are the packages of one go test command whose kept binary is there, and the command for the rest (nil
// when every package has one).
type binaryRuns struct {
	gt       goTest
	pkgs     []pkgDir
	binaries map[string]string // import path: kept binary
	goRoot   string
	rest     []string
}

// splitByBinaries decides, for a go test -json command whose packages are all named (patterns), which packages run
// from a binary kept in binDir. A command go test must run itself (an unknown flag) comes back whole in rest.
func splitByBinaries(command []string, binDir string) (binaryRuns, string, error) {
	gt, err := parseGoTest(command)
	if err != nil {
		return binaryRuns{rest: command}, fmt.Sprintf("go test runs it (%v)", err), nil
	}
	pkgs, err := listPackages(command[0], gt.patterns)
	if err != nil {
		return binaryRuns{}, "", err
	}
	goRoot, err := exec.Command(command[0], "env", "GOROOT").Output()
	if err != nil {
		return binaryRuns{}, "", fmt.Errorf("go env GOROOT: %w", err)
	}
	// Absolute: each binary starts in its package's directory.
	if binDir, err = filepath.Abs(binDir); err != nil {
		return binaryRuns{}, "", err
	}
	index, err := readIndex(binDir)
	if err != nil {
		return binaryRuns{}, "", err
	}
	runs := binaryRuns{gt: gt, goRoot: strings.TrimSpace(string(goRoot)), binaries: map[string]string{}}
	var missing []string
	for _, p := range pkgs {
		if bin, ok := index[p.importPath]; ok && fileExists(bin) {
			runs.pkgs = append(runs.pkgs, p)
			runs.binaries[p.importPath] = bin
		} else {
			missing = append(missing, p.importPath)
		}
	}
	if len(missing) > 0 {
		runs.rest = append(append([]string{command[0], command[1]}, gt.goFlags...), missing...)
	}
	return runs, fmt.Sprintf("%d packages from their kept binaries, %d through go test", len(runs.pkgs), len(missing)), nil
}

// readIndex reads which kept binary is whose (keepBinaries); a directory without an index holds none.
func readIndex(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	index := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		ip, rel, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s: unexpected line %q", filepath.Join(dir, "index"), line)
		}
		index[ip] = filepath.Join(dir, rel)
	}
	return index, nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// run starts the kept binaries, at most gt.parallel at a time in their order, each as go test would: in its
// package's directory, verbose through test2json (the same events as go test -json), with GOROOT/bin first on the
// PATH so the go command a test runs is this one.
func (b binaryRuns) run(s *summary, file, console io.Writer) error {
	env := append(os.Environ(), "PATH="+filepath.Join(b.goRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	goCmd := filepath.Join(b.goRoot, "bin", "go")
	sem := make(chan struct{}, b.gt.parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(b.pkgs))
	for i, p := range b.pkgs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			args := append([]string{"tool", "test2json", "-t", "-p", p.importPath, b.binaries[p.importPath],
				"-test.v=test2json", "-test.paniconexit0"}, b.gt.testFlags...)
			cmd := exec.Command(goCmd, args...)
			cmd.Dir = p.dir
			cmd.Env = env
			errs[i] = s.stream(cmd, file, console)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
