// Package ahead tests hack/ahead.sh, which runs make test's tool builds in the background: at the lowest CPU
// priority, its output in a log, and never longer than the make that started it.
package ahead

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// start runs hack/ahead.sh with a stand-in for make (a sleep the test ends) and the shell command script; it returns
// the stand-in and the log's path.
func start(t *testing.T, script string) (*exec.Cmd, string) {
	t.Helper()
	return startWithLog(t, filepath.Join(t.TempDir(), "ahead.log"), script)
}

// startWithLog is start with the log's path chosen by the caller (a script that needs it).
func startWithLog(t *testing.T, log, script string) (*exec.Cmd, string) {
	t.Helper()
	parent := exec.Command("sleep", "120")
	if err := parent.Start(); err != nil {
		t.Fatalf("starting the stand-in for make: %v", err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	out, err := exec.Command("../../hack/ahead.sh", strconv.Itoa(parent.Process.Pid), log, "bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/ahead.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), log) {
		t.Errorf("hack/ahead.sh does not say where the output goes (%s): %q", log, out)
	}
	return parent, log
}

// waitFor polls until cond holds; the bound is generous, and the failure names what was awaited.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logHas(log, text string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), text)
	}
}

// alive: the process exists and is not a zombie (a stopped process whose parent has not reaped it yet is gone).
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// The builds take only the CPU make leaves idle: nice 19, and where the kernel schedules each session as a group
// (autogroup), their session is niced too, or it would compete with make's as an equal.
func TestTheCommandRunsAtTheLowestPriorityIntoTheLog(t *testing.T) {
	_, log := start(t, `echo "nice $(cut -d' ' -f19 /proc/self/stat)"; echo "autogroup $(cat /proc/self/autogroup 2>/dev/null)"; echo built`)
	waitFor(t, "the command to end (ahead: done)", logHas(log, "ahead: done"))
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "nice 19\n") || !strings.Contains(string(b), "built\n") {
		t.Errorf("the log does not hold the command's output at nice 19:\n%s", b)
	}
	if _, err := os.Stat("/proc/self/autogroup"); err == nil && !strings.Contains(string(b), " nice 19\n") {
		t.Errorf("the kernel groups sessions (autogroup), and the builds' session is not niced:\n%s", b)
	}
}

func TestAFailedBuildIsReportedInTheLog(t *testing.T) {
	_, log := start(t, `echo compiling; exit 3`)
	waitFor(t, "the failure in the log", logHas(log, "ahead: failed (exit 3)"))
}

// When make fails or is interrupted, its builds ahead stop with it: the command and what it started.
func TestTheBuildsStopWhenMakeEnds(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	parent, log := start(t, `sleep 300 & echo "$$ $!" > `+pids+`.tmp && mv `+pids+`.tmp `+pids+`; wait`)
	waitFor(t, "the command and its child to start", func() bool { _, err := os.Stat(pids); return err == nil })
	b, _ := os.ReadFile(pids)
	started := strings.Fields(string(b))
	if len(started) != 2 {
		t.Fatalf("pids file %q", b)
	}
	for _, pid := range started {
		if !alive(pid) {
			t.Fatalf("process %s ended before make did", pid)
		}
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for _, pid := range started {
		waitFor(t, "process "+pid+" to be stopped after make ended", func() bool { return !alive(pid) })
	}
	waitFor(t, "the stop in the log", logHas(log, "ended; stopping the builds"))
}

// A stage that waits for a build ahead raises the builds to normal priority while it waits (hack/ahead.sh
// --boost-while): the build it waits for then gets the share of the CPU the stage would have had; when the last of
// overlapping waits ends they take only what the foreground leaves again. A wait from inside the builds' own session
// changes nothing.
func TestAWaitingStageRaisesTheBuildsToNormalPriorityWhileItWaits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a priority needs CAP_SYS_NICE: hack/ahead.sh --boost-while only runs its command without it (not root here)")
	}
	dir := t.TempDir()
	nice := filepath.Join(dir, "nice")
	inside := filepath.Join(dir, "inside")
	log := filepath.Join(t.TempDir(), "ahead.log")
	// The command first waits from inside its own session (the wait reports its priority, which must not change), then
	// reports its own nice
	// value (and its session's, where the kernel groups sessions) until stopped.
	startWithLog(t, log, `AHEAD_PGID=`+log+`.pgid ../../hack/ahead.sh --boost-while sh -c 'sleep 0.3; cut -d" " -f19 /proc/$$/stat' > `+inside+`; `+
		`while :; do { echo "$(cut -d' ' -f19 /proc/$$/stat) $(sed -n 's/.*nice //p' /proc/$$/autogroup 2>/dev/null)" > `+nice+`.tmp && mv `+nice+`.tmp `+nice+`; }; sleep 0.05; done`)
	read := func(f string) string { b, _ := os.ReadFile(f); return strings.TrimSpace(string(b)) }
	waitFor(t, "the command to report its priority", func() bool { return read(nice) != "" })
	lowest, normal := "19", "0"
	if _, err := os.Stat("/proc/self/autogroup"); err == nil {
		lowest, normal = "19 19", "0 0"
	}
	if got := read(inside); got != "19" {
		t.Errorf("a wait from inside the builds' session ran at nice %q; want 19 (nothing raised)", got)
	}
	if got := read(nice); got != lowest {
		t.Fatalf("before any wait the command runs at %q; want %q", got, lowest)
	}
	// wait starts hack/ahead.sh --boost-while with a command that ends when its file appears; it returns that file,
	// the waiter and the file its output goes to.
	wait := func(pgidFile, name string) (string, *exec.Cmd, string) {
		release, output := filepath.Join(dir, name), filepath.Join(dir, name+".out")
		out, err := os.Create(output)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = out.Close() }()
		cmd := exec.Command("../../hack/ahead.sh", "--boost-while", "bash", "-c", `until [ -e `+release+` ]; do sleep 0.05; done; exit 7`)
		cmd.Env = append(os.Environ(), "AHEAD_PGID="+pgidFile)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatalf("hack/ahead.sh --boost-while: %v", err)
		}
		t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600); _ = cmd.Wait() })
		return release, cmd, output
	}
	end := func(release string, cmd *exec.Cmd, output string) string {
		if err := os.WriteFile(release, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var exit *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 7 {
			t.Errorf("hack/ahead.sh --boost-while ended with %v; want the command's exit status 7", err)
		}
		return read(output)
	}
	// A file naming another process group (here this test's) is not the builds': nothing is changed.
	other := filepath.Join(dir, "other.pgid")
	if err := os.WriteFile(other, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
	r, c, o := wait(other, "other")
	time.Sleep(300 * time.Millisecond)
	if got := read(nice); got != lowest {
		t.Errorf("a wait with a process group that is not the builds' left the command at %q; want %q", got, lowest)
	}
	if out := end(r, c, o); out != "" {
		t.Errorf("--boost-while with a process group that is not the builds' said %q; want nothing", out)
	}
	// Two overlapping waits: normal priority until the second ends.
	r1, c1, o1 := wait(log+".pgid", "first")
	waitFor(t, "the command at "+normal+" (process, session) while a stage waits", func() bool { return read(nice) == normal })
	r2, c2, o2 := wait(log+".pgid", "second")
	waitFor(t, "the second wait to begin (it raises the builds too)", logHas(o2, "normal priority while it waits"))
	if out := end(r1, c1, o1); !strings.Contains(out, "normal priority while it waits") {
		t.Errorf("the first wait said %q; want that the builds run at normal priority while it waits", out)
	}
	time.Sleep(300 * time.Millisecond)
	if got := read(nice); got != normal {
		t.Errorf("the first of two waits ended and the command runs at %q; want %q until the second ends", got, normal)
	}
	if out := end(r2, c2, o2); !strings.Contains(out, "back at the lowest priority") {
		t.Errorf("the last wait said %q; want that the builds are back at the lowest priority", out)
	}
	waitFor(t, "the command back at "+lowest+" (process, session) after the last wait", func() bool { return read(nice) == lowest })
}
