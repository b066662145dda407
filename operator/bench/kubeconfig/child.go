package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// manager is the operator running in a child process, with its metrics endpoint on a local port.
type manager struct {
	cmd     *exec.Cmd
	done    chan error
	metrics string // URL of the metrics endpoint
	log     *os.File
	started time.Time
}

// startManager starts the bench manager binary against the kubeconfigs in dir and waits until the kubeconfig
// controller has started (its reconcile metrics exist).
func startManager(ctx context.Context, bin, dir, logPath string, extraArgs []string) (*manager, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create manager log: %w", err)
	}
	args := append([]string{
		"--gardener-kubeconfig-path=" + dir + "/garden.kubeconfig",
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--metrics-secure=false",
		"--health-probe-bind-address=0", "--leader-elect=false",
	}, extraArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+dir+"/kcp.kubeconfig")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	m := &manager{cmd: cmd, done: make(chan error, 1), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port), log: logFile}
	m.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start manager %s: %w", bin, err)
	}
	go func() { m.done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s, err := m.scrape(ctx)
		if err == nil && s.has("controller_runtime_reconcile_total", `controller="gardenercluster"`) {
			return m, nil
		}
		select {
		case err := <-m.done:
			return nil, fmt.Errorf("manager exited during start (log: %s): %w", logPath, err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.stop()
			return nil, fmt.Errorf("manager did not start its controller within 2m (log: %s, last error: %w)", logPath, err)
		}
	}
}

// peakRSS is the child's peak resident set size (VmHWM) in bytes.
func (m *manager) peakRSS() (int64, error) {
	return procStatusBytes(m.cmd.Process.Pid, "VmHWM:")
}

// stop sends SIGTERM (the manager shuts down gracefully) and waits for the process to end.
func (m *manager) stop() {
	if m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	var exitErr error
	select {
	case exitErr = <-m.done:
	case <-time.After(time.Minute):
		_ = m.cmd.Process.Kill()
		exitErr = <-m.done
	}
	if exitErr != nil {
		// The manager exits 0 on SIGTERM; anything else is worth seeing next to the numbers.
		fmt.Fprintf(os.Stderr, "bench: manager exited with %v (log: %s)\n", exitErr, m.log.Name())
	}
	_ = m.log.Close()
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

// samples is one scrape of the Prometheus text format: one line per series, "name{labels} value".
type samples []string

func (m *manager) scrape(ctx context.Context) (samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metrics, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", m.metrics, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	var out samples
	for _, line := range strings.Split(string(body), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, nil
}

// sum adds the values of the series of metric name whose labels contain every one of the given label pairs
// (written as in the exposition format, e.g. `controller="gardenercluster"`).
func (s samples) sum(name string, labels ...string) float64 {
	total := 0.0
	for _, line := range s {
		if !s.matches(line, name, labels) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			total += v
		}
	}
	return total
}

// byLabel is sum split by the value of one label.
func (s samples) byLabel(name, label string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range s {
		if !s.matches(line, name, labels) {
			continue
		}
		_, rest, ok := strings.Cut(line, label+`="`)
		if !ok {
			continue
		}
		value, _, _ := strings.Cut(rest, `"`)
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			out[value] += v
		}
	}
	return out
}

func (s samples) has(name string, labels ...string) bool {
	for _, line := range s {
		if s.matches(line, name, labels) {
			return true
		}
	}
	return false
}

func (samples) matches(line, name string, labels []string) bool {
	rest, ok := strings.CutPrefix(line, name)
	if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
		return false
	}
	for _, l := range labels {
		if !strings.Contains(rest, l) {
			return false
		}
	}
	return true
}

// cpuTime is the CPU time (user+system) the child used so far.
func (m *manager) cpuTime() (time.Duration, error) { return procCPU(m.cmd.Process.Pid) }

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
		return 0, fmt.Errorf("parse /proc/%d/stat: %w %w", pid, err1, err2)
	}
	const clockTick = 10 * time.Millisecond
	return time.Duration(utime+stime) * clockTick, nil
}
