// Command linkcache is a go build -toolexec wrapper that keeps what the linker writes, keyed by the link's inputs, so
// a later build of the same binary copies it instead of linking it again.
//
//	go test -toolexec=/abs/path/to/linkcache ./...
//
// The go command caches compiled packages but links every binary it is asked for again: every test binary of every
// go test run, every judge of a safety mutant, every manager a test builds in a child process. In make test that was
// about 200 links and 450 to 550 s of CPU per run on a warm machine, as much as test-all's compiles, for binaries
// mostly identical to the previous run's (docs/testing.md).
//
// The key is the go command's own: it passes the link action's ID as the first part of -buildid, a hash of the
// linker's version and configuration, the flags, and the content of every package linked in, the same ID that
// go build uses to decide that an installed binary is up to date. The key adds the linker's arguments (except the
// paths of the build's scratch directory, which change every build) and the environment the linker reads. Any other
// tool, a link without -buildid, and a link that writes files this command does not know run unchanged.
//
// The linker's output is kept as the linker wrote it; the go command then stamps its content hash into it, the same
// on a hit as after a link. The cache lives in $LINKCACHE_DIR (default: the user cache directory's kim/links) and
// holds at most $LINKCACHE_MAX_MB megabytes (default 16384), the least recently used going first. A failure of
// the cache never fails a build: the link runs as if there were no cache. With $LINKCACHE_LOG set, each link
// appends "hit|miss|store-failed <key> <output>" to that file.
//
// With $TOOLCHAIN_GOGC set, every tool it runs (the compiler, the linker, the assembler) runs with that GOGC: they
// run for seconds and exit, and with memory to spare a larger heap between collections costs less CPU (a cold
// build of client-go and controller-runtime: 390-409 s of CPU at GOGC=100, 361-363 s at 400, docs/testing.md). Only
// the tools: the test binaries and API servers the same go command starts keep their own GOGC.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: linkcache TOOL [ARGS...] (as go build -toolexec)")
		os.Exit(2)
	}
	tool, args := os.Args[1], os.Args[2:]
	if v := os.Getenv("TOOLCHAIN_GOGC"); v != "" {
		_ = os.Setenv("GOGC", v)
	}
	l, ok := parseLink(tool, args)
	if !ok {
		passThrough(tool, args)
	}
	c, err := openCache()
	if err != nil {
		passThrough(tool, args)
	}
	os.Exit(c.link(l, func() error { return run(tool, args) }))
}

// passThrough replaces this process with the tool, so the go command sees the tool itself (its -V=full answer, which
// goes into every package's cache key, included).
func passThrough(tool string, args []string) {
	path, err := exec.LookPath(tool)
	if err == nil {
		err = syscall.Exec(path, append([]string{tool}, args...), os.Environ())
	}
	fmt.Fprintf(os.Stderr, "linkcache: running %s: %v\n", tool, err)
	os.Exit(1)
}

func run(tool string, args []string) error {
	cmd := exec.Command(tool, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

// linkEnv is the environment the linker (or the external linker it may start) reads.
var linkEnv = []string{"GOROOT", "GOEXPERIMENT", "GOAMD64", "GO_EXTLINK_ENABLED", "GO_LDSO", "CC", "CXX",
	"CGO_ENABLED", "CGO_LDFLAGS", "CGO_CFLAGS"}

// scratchFlags are the linker flags whose values are paths in the build's scratch directory: outputs and inputs whose
// content the link action ID already covers.
var scratchFlags = map[string]bool{"-o": true, "-importcfg": true, "-fipso": true}

// A linkCall is one invocation of the linker that can be served from the cache.
type linkCall struct {
	key    string
	output string // -o
	fipso  string // -fipso: the FIPS module's object, written beside the binary when GOFIPS140 is set
}

// parseLink recognises a link the cache can serve: the go command's linker with a build ID and an output, and no
// flag that writes another file.
func parseLink(tool string, args []string) (linkCall, bool) {
	if strings.TrimSuffix(filepath.Base(tool), ".exe") != "link" || len(args) == 0 {
		return linkCall{}, false
	}
	var l linkCall
	h := sha256.New()
	fmt.Fprintf(h, "linkcache 1\ntool %s\n", tool)
	buildID := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case scratchFlags[name]:
			if !hasValue {
				if i+1 >= len(args) {
					return linkCall{}, false
				}
				i++
				value = args[i]
			}
			switch name {
			case "-o":
				l.output = value
			case "-fipso":
				l.fipso = value
			}
			fmt.Fprintf(h, "arg %s\n", name)
			continue
		case name == "-buildid" && hasValue:
			buildID = value
		case slices.Contains([]string{"-V", "-cpuprofile", "-memprofile", "-memprofilerate", "-linkshared",
			"-dumpdep", "-extar", "-tmpdir"}, name):
			// Informational, profiling, shared-library or external-archive modes: not worth keeping.
			return linkCall{}, false
		case i == len(args)-1 && !strings.HasPrefix(a, "-"):
			// The main package's archive, in the scratch directory; its action ID is inside -buildid.
			fmt.Fprintln(h, "main")
			continue
		}
		fmt.Fprintf(h, "arg %q\n", a)
	}
	actionID, _, _ := strings.Cut(buildID, "/")
	if actionID == "" || l.output == "" {
		return linkCall{}, false
	}
	for _, k := range linkEnv {
		v, set := os.LookupEnv(k)
		fmt.Fprintf(h, "env %s %t %q\n", k, set, v)
	}
	l.key = hex.EncodeToString(h.Sum(nil))
	return l, true
}

// cache is the directory of kept link outputs: <key> the binary, <key>.fipso the FIPS object when the link wrote one.
type cache struct {
	dir      string
	maxBytes int64
	log      string
}

func openCache() (*cache, error) {
	dir := os.Getenv("LINKCACHE_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(base, "kim", "links")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	maxMB := int64(16384)
	if v := os.Getenv("LINKCACHE_MAX_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("LINKCACHE_MAX_MB=%q: not a number of megabytes", v)
		}
		maxMB = n
	}
	return &cache{dir: dir, maxBytes: maxMB << 20, log: os.Getenv("LINKCACHE_LOG")}, nil
}

// link serves the call from the cache or runs linkFn and keeps its output. It returns the process's exit code.
func (c *cache) link(l linkCall, linkFn func() error) int {
	if c.restore(l) {
		c.record("hit", l)
		return 0
	}
	if err := linkFn(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "linkcache:", err)
		return 1
	}
	if err := c.store(l); err != nil {
		c.record("store-failed", l)
		return 0
	}
	c.record("miss", l)
	c.evict()
	return 0
}

func (c *cache) paths(l linkCall) (binary, fipso string) {
	return filepath.Join(c.dir, l.key), filepath.Join(c.dir, l.key+".fipso")
}

// restore copies a kept output to where the linker would have written it. A partial copy is removed, and the link
// then runs.
func (c *cache) restore(l linkCall) bool {
	binary, fipso := c.paths(l)
	if l.fipso != "" {
		if err := copyFile(fipso, l.fipso, 0o644); err != nil {
			return false
		}
	}
	if err := copyFile(binary, l.output, 0o755); err != nil {
		_ = os.Remove(l.output)
		return false
	}
	now := time.Now()
	_ = os.Chtimes(binary, now, now) // recently used: evicted last
	return true
}

// store keeps the link's outputs, each written to a temporary name and renamed, so a concurrent build never reads a
// half-written file. The FIPS object goes first: a binary in the cache means its object is there too.
func (c *cache) store(l linkCall) error {
	binary, fipso := c.paths(l)
	if l.fipso != "" {
		if err := copyAtomically(l.fipso, fipso, 0o644); err != nil {
			return err
		}
	}
	return copyAtomically(l.output, binary, 0o755)
}

// evict removes the least recently used outputs until the cache fits its size. Builds running at the same time may
// evict at once; a file removed while another build copies it stays readable to that copy.
func (c *cache) evict() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type kept struct {
		name string
		size int64
		used time.Time
	}
	var files []kept
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || strings.HasSuffix(e.Name(), ".fipso") {
			continue
		}
		if strings.Contains(e.Name(), ".tmp") {
			// Left by a build that was killed while it stored its output.
			if time.Since(info.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(c.dir, e.Name()))
			}
			continue
		}
		size := info.Size()
		if fi, err := os.Stat(filepath.Join(c.dir, e.Name()+".fipso")); err == nil {
			size += fi.Size()
		}
		files = append(files, kept{name: e.Name(), size: size, used: info.ModTime()})
		total += size
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= c.maxBytes {
			return
		}
		_ = os.Remove(filepath.Join(c.dir, f.name))
		_ = os.Remove(filepath.Join(c.dir, f.name+".fipso"))
		total -= f.size
	}
}

func (c *cache) record(event string, l linkCall) {
	if c.log == "" {
		return
	}
	f, err := os.OpenFile(c.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	// One write per line: O_APPEND keeps the lines of concurrent links whole.
	_, _ = fmt.Fprintf(f, "%s %s %s\n", event, l.key, l.output)
}

func copyAtomically(src, dst string, mode os.FileMode) error {
	tmp := fmt.Sprintf("%s.tmp%d", dst, os.Getpid())
	if err := copyFile(src, tmp, mode); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
