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
	"path/filepath"
	"time"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv"
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
	ctx, stop, err := harness.Prepare("kim-bench-kubeconfig-", &c.workDir, &c.managerBin)
	if err != nil {
		return err
	}
	defer stop()
	r := report{cfg: c, loadStart: harness.LoadAvg(), started: time.Now()}
	if !c.realKeys {
		gardenbox.PoolGardenerKeys(4)
	}
	harness.Logf("starting garden-in-a-box")
	w, err := startWorld(ctx, c.n)
	if err != nil {
		return err
	}
	defer func() { _ = w.env.Stop() }()
	t := time.Now()
	harness.Logf("creating %d shoots in the garden", c.n)
	if err := w.createShoots(ctx, c.timeout); err != nil {
		return err
	}
	r.shootsReady = time.Since(t)
	// The golden landscape configuration for the project: the manager validates all of it, whatever it runs.
	if _, err := harness.WriteOperatorConfig(c.workDir, w.env.Catalogue.Project); err != nil {
		return err
	}
	scope := testenv.Scope{Namespaces: []string{kcpNamespace}, GardenNamespace: w.env.Catalogue.ProjectNamespace()}
	if err := harness.WriteKubeconfigs(ctx, w.env, c.workDir, scope); err != nil {
		return err
	}
	if err := phaseConverge(ctx, c, w, &r); err != nil {
		return err
	}
	if err := phaseRestart(ctx, c, w, &r); err != nil {
		return err
	}
	r.loadEnd = harness.LoadAvg()
	r.print(os.Stdout)
	return nil
}

// managerArgs are the real manager's flags for the harness: only the kubeconfig controller, and the configuration
// file WriteOperatorConfig wrote.
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
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-1.log"), "gardenercluster", managerArgs(c, w.env.Catalogue.Project))
	if err != nil {
		return err
	}
	defer m.Stop()
	harness.Logf("manager started (pid %d); creating %d GardenerClusters", m.PID(), c.n)
	gardenCPU := harness.SelfCPU()
	start := time.Now()
	if err := w.createGardenerClusters(ctx); err != nil {
		return err
	}
	r.created = time.Since(start)
	var p progress
	err = testenv.Poll(ctx, c.timeout, time.Second, "converging (Ready GardenerClusters)", harness.Reaches(func() (int, error) {
		var err error
		p, err = w.converged(ctx)
		return min(p.ready, p.written), err
	}, c.n), harness.ProgressLog)
	if err != nil {
		return err
	}
	r.converged = time.Since(start)
	harness.Logf("converged in %s; waiting until the manager is idle", r.converged.Round(time.Second))
	counters, idleAt, err := waitIdle(ctx, m, w.gardenHost, w.kcpHost, c.n, c.idleQuiet, c.timeout)
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
	if r.first.peakRSS, err = m.PeakRSS(); err != nil {
		return err
	}
	r.first.cpu, err = m.CPUTime()
	r.gardenCPU = harness.SelfCPU() - gardenCPU
	return err
}

// phaseRestart starts a new manager on the converged world and waits until it is idle again.
func phaseRestart(ctx context.Context, c config, w *world, r *report) error {
	harness.Logf("restarting the manager")
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-2.log"), "gardenercluster", managerArgs(c, w.env.Catalogue.Project))
	if err != nil {
		return err
	}
	defer m.Stop()
	counters, idleAt, err := waitIdle(ctx, m, w.gardenHost, w.kcpHost, c.n, c.idleQuiet, c.timeout)
	if err != nil {
		return err
	}
	r.restart = phaseResult{counters: counters, busy: idleAt.Sub(m.Started())}
	p, err := w.converged(ctx)
	if err != nil {
		return err
	}
	r.restart.ready, r.restart.written, r.restart.reasons = p.ready, p.written, p.reasons
	if r.restart.peakRSS, err = m.PeakRSS(); err != nil {
		return err
	}
	r.restart.cpu, err = m.CPUTime()
	return err
}
