package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const linker = "/usr/local/go/pkg/tool/linux_amd64/link"

// linkArgs are the linker's arguments as the go command passes them for a test binary, in the scratch directory work.
func linkArgs(work, buildID string, extra ...string) []string {
	args := []string{"-o", work + "/b001/pkg.test", "-importcfg", work + "/b001/importcfg.link", "-s", "-w",
		"-X=runtime.godebugDefault=fips140=on", "-buildmode=exe", "-buildid=" + buildID}
	args = append(args, extra...)
	args = append(args, "-fipso", work+"/b001/fips.o", work+"/b001/_pkg_.a")
	return args
}

func TestParseLinkKeysOnTheInputsNotTheScratchDirectory(t *testing.T) {
	a, ok := parseLink(linker, linkArgs("/tmp/go-build1", "AAA/BBB/CCC/AAA"))
	require.True(t, ok)
	assert.Equal(t, "/tmp/go-build1/b001/pkg.test", a.output)
	assert.Equal(t, "/tmp/go-build1/b001/fips.o", a.fipso)

	b, ok := parseLink(linker, linkArgs("/tmp/go-build2", "AAA/BBB/CCC/AAA"))
	require.True(t, ok)
	assert.Equal(t, a.key, b.key, "another build's scratch directory is the same link")

	other, ok := parseLink(linker, linkArgs("/tmp/go-build1", "DDD/BBB/CCC/DDD"))
	require.True(t, ok)
	assert.NotEqual(t, a.key, other.key, "another link action ID is another binary")

	stamped, ok := parseLink(linker, linkArgs("/tmp/go-build1", "AAA/BBB/CCC/AAA", "-X=main.version=v2"))
	require.True(t, ok)
	assert.NotEqual(t, a.key, stamped.key, "a flag changes the key")

	t.Setenv("CGO_LDFLAGS", "-static")
	env, ok := parseLink(linker, linkArgs("/tmp/go-build1", "AAA/BBB/CCC/AAA"))
	require.True(t, ok)
	assert.NotEqual(t, a.key, env.key, "the linker's environment changes the key")
}

func TestParseLinkLeavesEverythingElseToTheTool(t *testing.T) {
	for name, call := range map[string][]string{
		"the compiler":         {"/usr/local/go/pkg/tool/linux_amd64/compile", "-o", "x.a", "-buildid=AAA/BBB", "x.go"},
		"the linker's version": {linker, "-V=full"},
		"no build ID":          {linker, "-o", "a.out", "-importcfg", "cfg", "main.a"},
		"no output":            {linker, "-buildid=AAA/BBB", "main.a"},
		"a profile":            {linker, "-o", "a.out", "-buildid=AAA/BBB", "-cpuprofile", "cpu.out", "main.a"},
		"a flag without value": {linker, "-buildid=AAA/BBB", "main.a", "-o"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok := parseLink(call[0], call[1:])
			assert.False(t, ok)
		})
	}
}

func newTestCache(t *testing.T, maxBytes int64) *cache {
	t.Helper()
	return &cache{dir: t.TempDir(), maxBytes: maxBytes, log: filepath.Join(t.TempDir(), "log")}
}

// fakeLink writes what a link would: the binary and the FIPS object, with the given content.
func fakeLink(t *testing.T, l linkCall, content string, calls *int) func() error {
	t.Helper()
	return func() error {
		*calls++
		require.NoError(t, os.WriteFile(l.output, []byte(content), 0o755))
		if l.fipso != "" {
			require.NoError(t, os.WriteFile(l.fipso, []byte("fips "+content), 0o644))
		}
		return nil
	}
}

func call(t *testing.T, key string) linkCall {
	t.Helper()
	work := t.TempDir()
	return linkCall{key: key, output: filepath.Join(work, "pkg.test"), fipso: filepath.Join(work, "fips.o")}
}

func TestASecondLinkOfTheSameInputsIsServedFromTheCache(t *testing.T) {
	c := newTestCache(t, 1<<30)
	calls := 0
	first := call(t, "k1")
	require.Equal(t, 0, c.link(first, fakeLink(t, first, "binary one", &calls)))

	second := call(t, "k1")
	require.Equal(t, 0, c.link(second, fakeLink(t, second, "must not run", &calls)))
	assert.Equal(t, 1, calls, "the second link was not run")
	got, err := os.ReadFile(second.output)
	require.NoError(t, err)
	assert.Equal(t, "binary one", string(got))
	fips, err := os.ReadFile(second.fipso)
	require.NoError(t, err)
	assert.Equal(t, "fips binary one", string(fips))
	info, err := os.Stat(second.output)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&0o100, "the served binary is executable")

	third := call(t, "k2")
	require.Equal(t, 0, c.link(third, fakeLink(t, third, "binary two", &calls)))
	assert.Equal(t, 2, calls, "other inputs are linked")

	log, err := os.ReadFile(c.log)
	require.NoError(t, err)
	assert.Equal(t, []string{"miss k1", "hit k1", "miss k2"}, logEvents(string(log)))
}

func logEvents(log string) []string {
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		f := strings.Fields(line)
		events = append(events, f[0]+" "+f[1])
	}
	return events
}

func TestAFailedLinkIsNotKept(t *testing.T) {
	c := newTestCache(t, 1<<30)
	l := call(t, "k1")
	failed := exec.Command("false").Run()
	require.Error(t, failed)
	assert.Equal(t, 1, c.link(l, func() error { return failed }), "the linker's exit code is the command's")

	calls := 0
	again := call(t, "k1")
	require.Equal(t, 0, c.link(again, fakeLink(t, again, "linked", &calls)))
	assert.Equal(t, 1, calls, "nothing was kept of the failed link")

	assert.Equal(t, 1, c.link(call(t, "k3"), func() error { return errors.New("no linker") }))
}

func TestABinaryWithoutItsFIPSObjectIsLinkedAgain(t *testing.T) {
	c := newTestCache(t, 1<<30)
	calls := 0
	first := call(t, "k1")
	first.fipso = "" // linked without GOFIPS140
	require.Equal(t, 0, c.link(first, fakeLink(t, first, "plain", &calls)))

	fips := call(t, "k1")
	require.Equal(t, 0, c.link(fips, fakeLink(t, fips, "with fips", &calls)))
	assert.Equal(t, 2, calls)
}

func TestTheLeastRecentlyUsedGoFirst(t *testing.T) {
	c := newTestCache(t, 1<<30)
	calls := 0
	old := time.Now().Add(-time.Hour)
	for i, key := range []string{"a", "b", "c"} {
		l := call(t, key)
		l.fipso = ""
		require.Equal(t, 0, c.link(l, fakeLink(t, l, "0123456789", &calls)))
		// a used first, then b, then c; a is used again below.
		require.NoError(t, os.Chtimes(filepath.Join(c.dir, key), old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute)))
	}
	stale := filepath.Join(c.dir, "d.tmp99")
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(stale, old, old))

	a := call(t, "a")
	a.fipso = ""
	require.Equal(t, 0, c.link(a, fakeLink(t, a, "never", &calls)), "a hit marks a as used now")
	require.Equal(t, 3, calls)
	c.maxBytes = 25
	c.evict()

	_, err := os.Stat(filepath.Join(c.dir, "b"))
	assert.True(t, os.IsNotExist(err), "b, the least recently used, was evicted")
	for _, key := range []string{"a", "c"} {
		_, err := os.Stat(filepath.Join(c.dir, key))
		assert.NoError(t, err, "%s stays", key)
	}
	_, err = os.Stat(stale)
	assert.True(t, os.IsNotExist(err), "a temporary file an hour old was removed")
}

// TestGoBuildThroughTheCache builds a program twice through this command as -toolexec: the second build's link is
// served from the cache, and the binary is the one a link writes (the go command stamps both the same).
func TestGoBuildThroughTheCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache is used on CI's Linux machines")
	}
	tmp := t.TempDir()
	wrapper := filepath.Join(tmp, "linkcache")
	build := exec.Command("go", "build", "-o", wrapper, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	prog := filepath.Join(tmp, "prog")
	require.NoError(t, os.MkdirAll(prog, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prog, "go.mod"), []byte("module example.com/prog\n\ngo 1.26\n"), 0o644))
	write := func(greeting string) {
		src := "package main\n\nimport \"fmt\"\n\nvar version = \"dev\"\n\nfunc main() { fmt.Println(\"" + greeting + "\", version) }\n"
		require.NoError(t, os.WriteFile(filepath.Join(prog, "main.go"), []byte(src), 0o644))
	}
	cacheDir, log := filepath.Join(tmp, "links"), filepath.Join(tmp, "links.log")
	goBuild := func(output string, flags ...string) string {
		args := append([]string{"build", "-trimpath", "-toolexec=" + wrapper, "-o", output}, flags...)
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Dir = prog
		cmd.Env = append(os.Environ(), "LINKCACHE_DIR="+cacheDir, "LINKCACHE_LOG="+log, "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		run, err := exec.Command(output).Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(run))
	}
	events := func() []string {
		b, err := os.ReadFile(log)
		require.NoError(t, err)
		var e []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			e = append(e, strings.Fields(line)[0])
		}
		return e
	}

	write("hello")
	assert.Equal(t, "hello dev", goBuild(filepath.Join(tmp, "one")))
	assert.Equal(t, "hello dev", goBuild(filepath.Join(tmp, "two")))
	assert.Equal(t, []string{"miss", "hit"}, events())
	one, err := os.ReadFile(filepath.Join(tmp, "one"))
	require.NoError(t, err)
	two, err := os.ReadFile(filepath.Join(tmp, "two"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(one, two), "the served binary is the linked one, byte for byte")

	assert.Equal(t, "hello v2", goBuild(filepath.Join(tmp, "stamped"), "-ldflags=-X main.version=v2"))
	write("bye")
	assert.Equal(t, "bye dev", goBuild(filepath.Join(tmp, "changed")))
	assert.Equal(t, []string{"miss", "hit", "miss", "miss"}, events(), "another flag or another source is linked")
}

// TestTheToolsRunWithTheToolchainsGOGC runs the built wrapper over a stand-in tool that reports its GOGC: as a
// tool it passes through and as a linker whose output it keeps, the tool sees TOOLCHAIN_GOGC; without it, the GOGC
// the wrapper was given.
func TestTheToolsRunWithTheToolchainsGOGC(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the wrapper is used on CI's Linux machines")
	}
	tmp := t.TempDir()
	wrapper := filepath.Join(tmp, "linkcache")
	out, err := exec.Command("go", "build", "-o", wrapper, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	// The stand-in writes its GOGC to the file after -o (a link's output) or to stdout.
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo \"GOGC=$GOGC\" > \"$2\"; exit 0; fi; shift; done\necho \"GOGC=$GOGC\"\n"
	for _, name := range []string{"compile", "link"} {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, name), []byte(script), 0o755))
	}
	run := func(env []string, tool string, args ...string) string {
		cmd := exec.Command(wrapper, append([]string{filepath.Join(tmp, tool)}, args...)...)
		cmd.Env = append(os.Environ(), append(env, "LINKCACHE_DIR="+filepath.Join(tmp, "links"))...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	assert.Equal(t, "GOGC=400", run([]string{"GOGC=100", "TOOLCHAIN_GOGC=400"}, "compile", "-V=full"))
	assert.Equal(t, "GOGC=100", run([]string{"GOGC=100", "TOOLCHAIN_GOGC="}, "compile", "-V=full"))
	binary := filepath.Join(tmp, "b001", "exe", "a.out")
	require.NoError(t, os.MkdirAll(filepath.Dir(binary), 0o755))
	run([]string{"GOGC=100", "TOOLCHAIN_GOGC=400"}, "link", "-o", binary, "-buildid=AAA/BBB/CCC/AAA", "main.a")
	got, err := os.ReadFile(binary)
	require.NoError(t, err)
	assert.Equal(t, "GOGC=400\n", string(got), "the linker, run by the cache, has the toolchain's GOGC")
}
