package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Manager is the operator running in a child process, with its metrics endpoint on a local port.
type Manager struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has ended; then exitErr is set
	exitErr error
	stopped sync.Once
	metrics string // URL of the metrics endpoint
	pprof   string // base URL of the profiling endpoints
	log     *os.File
	started time.Time
	ended   time.Time // set before done is closed
}

// ManagerEnv is added to the environment of every manager started (e.g. GOMEMLIMIT): set by a harness's flags, it
// reaches the child only, not the harness with its in-process API servers.
var ManagerEnv []string

// StartManager starts the manager binary against the manager's kubeconfigs in dir (written by WriteKubeconfigs:
// the shipped RBAC, not admin), without leader election, and waits until readyController has started (its
// reconcile metrics exist).
func StartManager(ctx context.Context, bin, dir, logPath, readyController string, extraArgs []string) (*Manager, error) {
	return startManager(ctx, bin, dir, logPath, false, func(s Samples) bool {
		return s.Has("controller_runtime_reconcile_total", `controller="`+readyController+`"`)
	}, extraArgs)
}

// StartReplica is StartManager for one of several replicas: with leader election (the shipped lease settings),
// ready once its metrics endpoint serves kim_gardener_health, which standbys report too; its controllers start
// only when it holds the lease.
func StartReplica(ctx context.Context, bin, dir, logPath string, extraArgs []string) (*Manager, error) {
	return startManager(ctx, bin, dir, logPath, true, func(s Samples) bool { return s.Has("kim_gardener_health") }, extraArgs)
}

func startManager(ctx context.Context, bin, dir, logPath string, leaderElect bool, ready func(Samples) bool, extraArgs []string) (*Manager, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pprofPort, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create manager log: %w", err)
	}
	args := append([]string{
		"--gardener-kubeconfig-path=" + filepath.Join(dir, ManagerGardenKubeconfigFile),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--metrics-secure=false",
		"--health-probe-bind-address=0", fmt.Sprintf("--leader-elect=%t", leaderElect),
		fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pprofPort),
	}, extraArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), ManagerEnv...), "KUBECONFIG="+filepath.Join(dir, ManagerKCPKubeconfigFile))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	m := &Manager{cmd: cmd, done: make(chan struct{}), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
		pprof: fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pprofPort), log: logFile}
	m.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start manager %s: %w", bin, err)
	}
	go func() {
		m.exitErr = cmd.Wait()
		m.ended = time.Now()
		close(m.done)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s, err := m.Scrape(ctx)
		if err == nil && ready(s) {
			return m, nil
		}
		select {
		case <-m.done:
			m.Stop()
			return nil, fmt.Errorf("manager exited during start (log: %s): %w", logPath, m.exitErr)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.Stop()
			return nil, fmt.Errorf("manager did not start its controller within 2m (log: %s): %w", logPath, err)
		}
	}
}

// PeakRSS is the child's peak resident set size (VmHWM) in bytes.
func (m *Manager) PeakRSS() (int64, error) {
	return procStatusBytes(m.cmd.Process.Pid, "VmHWM:")
}

// Stop sends SIGTERM (the manager shuts down gracefully) and waits for the process to end.
func (m *Manager) Stop() {
	m.stopped.Do(func() {
		if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			Logf("stop manager: %v", err)
		}
		select {
		case <-m.done:
		case <-time.After(time.Minute):
			if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				Logf("kill manager: %v", err)
			}
			<-m.done
		}
		if m.exitErr != nil {
			// The manager exits 0 on SIGTERM; anything else is worth seeing next to the numbers.
			Logf("manager exited with %v (log: %s)", m.exitErr, m.log.Name())
		}
		_ = m.log.Close()
	})
}

// HeapProfile writes the child's heap profile (after a garbage collection, so it shows what is live) to path, for
// `go tool pprof -sample_index=inuse_space`.
func (m *Manager) HeapProfile(ctx context.Context, path string) error {
	return m.profile(ctx, "/heap?gc=1", path)
}

// CPUProfile records the child's CPU for d and writes the profile to path: where the time of a phase goes.
func (m *Manager) CPUProfile(ctx context.Context, d time.Duration, path string) error {
	return m.profile(ctx, fmt.Sprintf("/profile?seconds=%d", max(1, int(d.Seconds()))), path)
}

func (m *Manager) profile(ctx context.Context, query, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.pprof+query, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", query, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", query, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("write profile %s: %w", path, err)
	}
	return f.Close()
}

// Kill ends the manager with SIGKILL, a crash without any shutdown, and waits for the process to end.
func (m *Manager) Kill() {
	m.stopped.Do(func() {
		if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			Logf("kill manager: %v", err)
		}
		<-m.done
		_ = m.log.Close()
	})
}

// Exited reports whether the process has ended (by itself, or by Stop or Kill).
func (m *Manager) Exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", field, rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CPUTime is the CPU time (user+system) the child used so far.
func (m *Manager) CPUTime() (time.Duration, error) { return procCPU(m.cmd.Process.Pid) }

// procCPU reads utime and stime of a process from /proc/<pid>/stat (in clock ticks of 1/100 s on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	// The command name (field 2) may contain spaces; the fields after it start behind the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, errors.Join(err1, err2))
	}
	const clockTick = 10 * time.Millisecond
	return time.Duration(utime+stime) * clockTick, nil
}

// Ended is when the process was seen to end (zero while it runs).
func (m *Manager) Ended() time.Time {
	select {
	case <-m.done:
		return m.ended
	default:
		return time.Time{}
	}
}

// ExitErr is how the process ended (nil: exit status 0, or still running).
func (m *Manager) ExitErr() error {
	select {
	case <-m.done:
		return m.exitErr
	default:
		return nil
	}
}

// LogPath is the file the process's output goes to.
func (m *Manager) LogPath() string { return m.log.Name() }

// PID is the manager's process ID.
func (m *Manager) PID() int { return m.cmd.Process.Pid }

// Started is when the process was started.
func (m *Manager) Started() time.Time { return m.started }
