// Command kubeconfig is the load harness of kubeconfig management (not a test: it measures, it does not assert
// timings). On garden-in-a-box it creates N shoots directly in the garden, starts the operator with only the
// kubeconfig controller in a child process (the real manager, operator/cmd/manager --controllers=gardenercluster), creates N GardenerClusters in the
// shape KEB creates, and reports the time until all Secrets are written and all GardenerClusters are Ready, the
// Gardener calls made, reconciles/s and the manager's peak RSS. It then restarts the manager and reports the
// Gardener calls made until the manager is idle again (none are due, so the target is 0).
//
// Run it with `make bench-kubeconfig BENCH_N=1000` (needs KUBEBUILDER_ASSETS; the target sets it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kyma-project/kim/internal/testenv"
	"github.com/kyma-project/kim/operator/app"
	opconfig "github.com/kyma-project/kim/operator/config"
)

type config struct {
	n                  int
	managerBin         string
	workers            int
	gardenerQPS        float64
	gardenerBurst      int
	realKeys           bool
	timeout, idleQuiet time.Duration
	workDir            string
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-kubeconfig:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func parseFlags() (config, error) {
	d := app.DefaultOptions()
	c := config{}
	flag.IntVar(&c.n, "n", 1000, "number of GardenerClusters (and shoots), 1..10000")
	flag.StringVar(&c.managerBin, "manager-bin", "", "manager binary (default: go build ./operator/cmd/manager)")
	flag.IntVar(&c.workers, "workers", d.GardenerClusterWorkers, "--gardener-cluster-workers of the manager")
	flag.Float64Var(&c.gardenerQPS, "gardener-qps", float64(d.GardenerQPS), "--gardener-qps of the manager")
	flag.IntVar(&c.gardenerBurst, "gardener-burst", d.GardenerBurst, "--gardener-burst of the manager")
	flag.BoolVar(&c.realKeys, "real-keys", false, "let the gardener-apiserver generate a 3072-bit RSA key per kubeconfig (slow); default: a pool of 4 keys")
	flag.DurationVar(&c.timeout, "timeout", time.Hour, "bound of each phase")
	flag.DurationVar(&c.idleQuiet, "idle-quiet", 3*time.Second, "how long nothing may change before the manager counts as idle")
	flag.StringVar(&c.workDir, "work-dir", "", "where kubeconfigs and manager logs go (default: a new temporary directory, kept)")
	flag.Parse()
	if c.n < 1 || c.n > 10000 {
		return c, fmt.Errorf("-n %d: must be between 1 and 10000", c.n)
	}
	return c, nil
}

func run() error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	// Ctrl-C ends the run through the deferred clean-up, so no API server or manager is left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.workDir == "" {
		if c.workDir, err = os.MkdirTemp("", "kim-bench-kubeconfig-"); err != nil {
			return fmt.Errorf("create work dir: %w", err)
		}
	}
	if c.managerBin == "" {
		c.managerBin = filepath.Join(c.workDir, "manager")
		logf("building the manager into %s", c.managerBin)
		if out, err := exec.Command("go", "build", "-o", c.managerBin, "./operator/cmd/manager").CombinedOutput(); err != nil {
			return fmt.Errorf("build bench manager: %w: %s", err, out)
		}
	}
	r := report{cfg: c, loadStart: loadAvg(), started: time.Now()}
	if !c.realKeys {
		poolGardenerKeys(4)
	}
	logf("starting garden-in-a-box")
	w, err := startWorld(ctx, c.n)
	if err != nil {
		return err
	}
	defer func() { _ = w.env.Stop() }()
	t := time.Now()
	logf("creating %d shoots in the garden", c.n)
	if err := w.createShoots(ctx, c.timeout); err != nil {
		return err
	}
	r.shootsReady = time.Since(t)
	cfg := fmt.Sprintf("apiVersion: %s\nkind: %s\ngardener:\n  project: %s\n", opconfig.APIVersion, opconfig.Kind, w.env.Catalogue.Project)
	if err := os.WriteFile(filepath.Join(c.workDir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := w.env.WriteKubeconfigs(c.workDir); err != nil {
		return err
	}
	if err := phaseConverge(ctx, c, w, &r); err != nil {
		return err
	}
	if err := phaseRestart(ctx, c, w, &r); err != nil {
		return err
	}
	r.loadEnd = loadAvg()
	r.print(os.Stdout)
	return nil
}

// managerArgs are the real manager's flags for the harness: only the kubeconfig controller, and a configuration
// file naming just the project (shoot generation is not needed to manage kubeconfigs).
func managerArgs(c config, project string) []string {
	return []string{
		"--controllers=gardenercluster", "--config=" + filepath.Join(c.workDir, "config.yaml"), "--watch-namespaces=" + kcpNamespace,
		"--gardener-project=" + project,
		fmt.Sprintf("--gardener-cluster-workers=%d", c.workers),
		fmt.Sprintf("--gardener-qps=%g", c.gardenerQPS), fmt.Sprintf("--gardener-burst=%d", c.gardenerBurst),
		"--zap-time-encoding=rfc3339nano",
	}
}

// phaseConverge starts the manager, creates the GardenerClusters and waits until all converged and the manager is
// idle.
func phaseConverge(ctx context.Context, c config, w *world, r *report) error {
	m, err := startManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-1.log"), managerArgs(c, w.env.Catalogue.Project))
	if err != nil {
		return err
	}
	defer m.stop()
	logf("manager started (pid %d); creating %d GardenerClusters", m.cmd.Process.Pid, c.n)
	gardenCPU := selfCPU()
	start := time.Now()
	if err := w.createGardenerClusters(ctx); err != nil {
		return err
	}
	r.created = time.Since(start)
	var p progress
	err = testenv.Poll(ctx, c.timeout, time.Second, "converging (Ready GardenerClusters)", reaches(func() (int, error) {
		var err error
		p, err = w.converged(ctx)
		return min(p.ready, p.written), err
	}, c.n), progressLog)
	if err != nil {
		return err
	}
	r.converged = time.Since(start)
	logf("converged in %s; waiting until the manager is idle", r.converged.Round(time.Second))
	counters, idleAt, err := m.waitIdle(ctx, w.gardenHost, w.kcpHost, c.n, c.idleQuiet, c.timeout)
	if err != nil {
		return err
	}
	// Read again once idle: the condition reasons after the manager's last word.
	if p, err = w.converged(ctx); err != nil {
		return err
	}
	r.first = phaseResult{counters: counters, busy: idleAt.Sub(start), ready: p.ready, written: p.written, reasons: p.reasons}
	if r.first.usable, err = w.verifySecrets(ctx); err != nil {
		return err
	}
	if r.first.peakRSS, err = m.peakRSS(); err != nil {
		return err
	}
	r.first.cpu, err = m.cpuTime()
	r.gardenCPU = selfCPU() - gardenCPU
	return err
}

// phaseRestart starts a new manager on the converged world and waits until it is idle again.
func phaseRestart(ctx context.Context, c config, w *world, r *report) error {
	logf("restarting the manager")
	m, err := startManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-2.log"), managerArgs(c, w.env.Catalogue.Project))
	if err != nil {
		return err
	}
	defer m.stop()
	counters, idleAt, err := m.waitIdle(ctx, w.gardenHost, w.kcpHost, c.n, c.idleQuiet, c.timeout)
	if err != nil {
		return err
	}
	r.restart = phaseResult{counters: counters, busy: idleAt.Sub(m.started)}
	p, err := w.converged(ctx)
	if err != nil {
		return err
	}
	r.restart.ready, r.restart.written, r.restart.reasons = p.ready, p.written, p.reasons
	if r.restart.peakRSS, err = m.peakRSS(); err != nil {
		return err
	}
	r.restart.cpu, err = m.cpuTime()
	return err
}

// selfCPU is the CPU time of this process: the harness, the in-process gardener-apiserver and the gardenlet.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
