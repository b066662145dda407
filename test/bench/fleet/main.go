// Command fleet is the fleet load harness (issue 18; not a test: it measures, it does not assert timings). On
// garden-in-a-box it starts the production manager with all controllers in a child process, creates N KEB-shaped
// Runtimes (plan mix trial, aws, azure, gcp) whose shoots the simulated gardenlet creates, and extra GardenerClusters
// on shoots created directly in the garden (2N clusters in all by default), and reports: the time until every
// Runtime and GardenerCluster is Ready, the Gardener and KCP requests by verb, the manager's peak RSS and CPU time;
// then the steady state (the gardenlet reporting on 5 % of the shoots a minute: CPU per shoot event); then a
// restart on the converged fleet, printed on one line (time to idle, Gardener writes: the target is 0).
//
// With -seed the fleet is copied from one provisioned Runtime per plan instead of provisioned (seed.go): phase 1 is
// then a start on a converged fleet. With -handover a last phase measures a warm standby taking over (handover.go).
//
// Run it with `make bench-fleet BENCH_RUNTIMES=200` (needs KUBEBUILDER_ASSETS; the target sets it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

type config struct {
	runtimes, extra           int
	managerBin, workDir       string
	gardenerQPS               float64
	gardenerBurst             int
	createDuration            time.Duration
	steady, idleWindow, quiet time.Duration
	touchPerMinute            float64
	timeout                   time.Duration
	// harnessProfile: where the harness process itself (gardener-apiserver in process, the simulated gardenlet,
	// the KEB and convergence clients) spends its CPU, for the whole run; at fleet size it, not the manager, sets
	// the pace on a 2-core machine.
	harnessProfile string
	// seed copies a converged fleet from templates instead of provisioning it through the manager (seed.go).
	seed bool
	// handover adds the two-replica phase after the restart (handover.go).
	handover bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-fleet:", err)
		os.Exit(1)
	}
}

func parseFlags() (config, error) {
	d := app.DefaultOptions()
	c := config{}
	flag.IntVar(&c.runtimes, "runtimes", 200, "number of Runtimes, 1..10000")
	flag.IntVar(&c.extra, "extra-clusters", -1, "GardenerClusters on shoots without a Runtime (default: as many as Runtimes, 2x clusters in all)")
	flag.StringVar(&c.managerBin, "manager-bin", "", "manager binary (default: go build ./operator/cmd/manager)")
	flag.Float64Var(&c.gardenerQPS, "gardener-qps", float64(d.GardenerQPS), "--gardener-qps of the manager")
	flag.IntVar(&c.gardenerBurst, "gardener-burst", d.GardenerBurst, "--gardener-burst of the manager")
	flag.DurationVar(&c.createDuration, "create-duration", 2*time.Second, "how long the simulated gardenlet takes to create a shoot")
	flag.DurationVar(&c.steady, "steady", 2*time.Minute, "length of the steady-state phase (0: none)")
	flag.DurationVar(&c.idleWindow, "idle-window", 30*time.Second, "idle baseline measured before and again after the steady state's events")
	flag.Float64Var(&c.touchPerMinute, "touch", 0.05, "share of the Runtimes' shoots the gardenlet reports on per minute in the steady state")
	flag.DurationVar(&c.quiet, "idle-quiet", 3*time.Second, "how long nothing may change before the manager counts as idle")
	flag.DurationVar(&c.timeout, "timeout", time.Hour, "bound of each phase")
	memLimit := flag.String("manager-memory-limit", "", "GOMEMLIMIT of the manager (e.g. 360MiB; default none, as outside a container)")
	flag.Func("manager-env", "NAME=VALUE added to the manager's environment (repeatable; e.g. KIM_ZAP_LOG_LEVEL=debug)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want NAME=VALUE, got %q", v)
		}
		harness.ManagerEnv = append(harness.ManagerEnv, v)
		return nil
	})
	flag.StringVar(&c.harnessProfile, "harness-cpuprofile", "", "write the harness process's own CPU profile of the whole run to this file")
	flag.BoolVar(&c.seed, "seed", false, "seed a converged fleet (copies of one provisioned Runtime per plan) and measure a start on it instead of provisioning")
	flag.BoolVar(&c.handover, "handover", false, "after the restart, a leader and a warm standby: stop the leader and measure the standby's take-over")
	flag.StringVar(&c.workDir, "work-dir", "", "where kubeconfigs and manager logs go (default: a new temporary directory, kept)")
	flag.Parse()
	if *memLimit != "" {
		harness.ManagerEnv = append(harness.ManagerEnv, "GOMEMLIMIT="+*memLimit)
	}
	if c.extra < 0 {
		c.extra = c.runtimes
	}
	if c.runtimes < 1 || c.runtimes > 10000 || c.extra > extraOffset {
		return c, fmt.Errorf("-runtimes %d, -extra-clusters %d: out of range", c.runtimes, c.extra)
	}
	return c, nil
}

func run() error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop, err := harness.Prepare("kim-bench-fleet-", &c.workDir, &c.managerBin)
	if err != nil {
		return err
	}
	defer stop()
	if c.harnessProfile != "" {
		f, err := os.Create(c.harnessProfile)
		if err != nil {
			return fmt.Errorf("harness CPU profile: %w", err)
		}
		defer func() { _ = f.Close() }()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("harness CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	r := report{cfg: c, loadStart: harness.LoadAvg(), started: time.Now()}
	// Admin kubeconfigs with a few pooled RSA keys: the harness measures the operator, not Gardener's key generation.
	gardenbox.PoolGardenerKeys(4)
	harness.Logf("starting garden-in-a-box")
	w, err := startFleetWorld(ctx, c)
	if err != nil {
		return err
	}
	defer func() { _ = w.Env.Stop() }()
	t := time.Now()
	if !c.seed {
		harness.Logf("creating %d shoots without a Runtime for the extra GardenerClusters", c.extra)
		names, ids := w.extraShoots()
		if err := w.CreateShoots(ctx, names, ids, w.workers, c.timeout); err != nil {
			return err
		}
	}
	scope := testenv.Scope{Namespaces: []string{"kcp-system"}, GardenNamespace: w.Env.Catalogue.ProjectNamespace()}
	if err := harness.WriteKubeconfigs(ctx, w.Env, c.workDir, scope); err != nil {
		return err
	}
	cfgPath, err := harness.WriteOperatorConfig(c.workDir, w.Env.Catalogue.Project)
	if err != nil {
		return err
	}
	args := []string{"--config=" + cfgPath, "--watch-namespaces=" + "kcp-system", "--zap-time-encoding=rfc3339nano",
		fmt.Sprintf("--gardener-qps=%g", c.gardenerQPS), fmt.Sprintf("--gardener-burst=%d", c.gardenerBurst)}
	if c.seed {
		if err := seedFleet(ctx, c, w, args, &r); err != nil {
			return err
		}
	}
	r.setup = time.Since(t)
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-1.log"), "runtime", args)
	if err != nil {
		return err
	}
	if c.seed {
		err = phaseSeededStart(ctx, c, w, m, &r)
	} else {
		err = phaseConverge(ctx, c, w, m, &r)
	}
	if err == nil && c.steady > 0 {
		err = phaseSteady(ctx, c, w, m, &r)
	}
	m.Stop()
	if err != nil {
		return err
	}
	if err := phaseRestart(ctx, c, w, args, &r); err != nil {
		return err
	}
	if c.handover {
		if err := phaseHandover(ctx, c, w, args, &r); err != nil {
			return err
		}
	}
	r.loadEnd = harness.LoadAvg()
	r.print(os.Stdout)
	return nil
}

// phaseConverge creates the fleet with the manager running and waits until all of it is Ready and the manager idle.
func phaseConverge(ctx context.Context, c config, w *fleetWorld, m *harness.Manager, r *report) error {
	harness.Logf("manager started (pid %d); creating %d Runtimes and %d GardenerClusters", m.PID(), c.runtimes, c.extra)
	gardenCPU := harness.SelfCPU()
	start := time.Now()
	if err := w.createRuntimes(ctx); err != nil {
		return err
	}
	r.created = time.Since(start)
	r.createdEnd = time.Now()
	stopSampling := harness.SampleMemory(ctx, m, time.Second)
	defer func() { r.convergePeaks = stopSampling() }()
	var p progress
	want, halfway := 2*c.runtimes+c.extra, false
	err := testenv.Poll(ctx, c.timeout, pollInterval(c.runtimes), "converging (Ready Runtimes + Ready GardenerClusters)", harness.Reaches(func() (int, error) {
		var err error
		p, err = w.progress(ctx)
		ready := p.runtimesReady + p.clustersReady
		if err == nil && !halfway && ready >= want/2 {
			// The peak RSS is reached while the fleet converges, not when it is idle: what is live then.
			halfway = true
			err = writeHeapProfile(ctx, m, c.workDir, "heap-halfway.pb.gz")
		}
		return ready, err
	}, want), harness.ProgressLog)
	if err != nil {
		return fmt.Errorf("%w (runtime states %v)", err, p.runtimeStates)
	}
	r.converged = time.Since(start)
	harness.Logf("converged in %s; waiting until the manager is idle", r.converged.Round(time.Second))
	counters, idleAt, err := waitIdle(ctx, m, w, 2*c.runtimes+c.extra, c.quiet, c.timeout)
	if err != nil {
		return err
	}
	r.first = phaseResult{counters: counters, busy: idleAt.Sub(start), progress: p, load: harness.LoadAvg()}
	if r.first.peakRSS, err = m.PeakRSS(); err != nil {
		return err
	}
	if r.first.cpu, err = m.CPUTime(); err != nil {
		return err
	}
	r.gardenCPU = harness.SelfCPU() - gardenCPU
	return writeHeapProfile(ctx, m, c.workDir, "heap-converged.pb.gz")
}

// phaseSeededStart waits until the manager started on a seeded fleet is idle: its first pass over a converged fleet
// (what it writes says how faithful the copies are: a converged fleet needs no write).
func phaseSeededStart(ctx context.Context, c config, w *fleetWorld, m *harness.Manager, r *report) error {
	harness.Logf("manager started (pid %d) on the seeded fleet", m.PID())
	gardenCPU := harness.SelfCPU()
	r.createdEnd = m.Started()
	stopSampling := harness.SampleMemory(ctx, m, time.Second)
	defer func() { r.convergePeaks = stopSampling() }()
	counters, idleAt, err := waitIdle(ctx, m, w, 2*c.runtimes+c.runtimes+c.extra, c.quiet, c.timeout)
	if err != nil {
		return err
	}
	r.converged = idleAt.Sub(m.Started())
	r.first = phaseResult{counters: counters, busy: r.converged, load: harness.LoadAvg()}
	if err := r.first.finish(ctx, w, m); err != nil {
		return err
	}
	r.gardenCPU = harness.SelfCPU() - gardenCPU
	harness.Logf("idle after %s: Gardener %s; KCP %s; reconciles %s", r.converged.Round(100*time.Millisecond),
		orNone(join(counters.garden)), orNone(join(counters.kcp)), join(counters.reconciles))
	return writeHeapProfile(ctx, m, c.workDir, "heap-converged.pb.gz")
}

// finish records what the fleet and the manager show at the end of a phase: the Runtimes' states, the peak RSS and
// the CPU time.
func (f *phaseResult) finish(ctx context.Context, w *fleetWorld, m *harness.Manager) error {
	var err error
	if f.progress, err = w.progress(ctx); err != nil {
		return err
	}
	if f.peakRSS, err = m.PeakRSS(); err != nil {
		return err
	}
	f.cpu, err = m.CPUTime()
	return err
}

// pollInterval is how often convergence is polled: each poll lists every Runtime and GardenerCluster (at 5,000
// Runtimes some 15,000 objects decoded by the harness, on the cores the manager and the API servers need), so the
// interval grows with the fleet; the converge time is exact to one interval (3 s up to 1,000 Runtimes, 15 s at 5,000).
func pollInterval(runtimes int) time.Duration {
	return max(3*time.Second, time.Duration(runtimes)*3*time.Millisecond)
}

// writeHeapProfile keeps the idle manager's heap profile next to its log: what the peak RSS is made of.
func writeHeapProfile(ctx context.Context, m *harness.Manager, dir, name string) error {
	path := filepath.Join(dir, name)
	if err := m.HeapProfile(ctx, path); err != nil {
		return err
	}
	harness.Logf("heap profile: %s (go tool pprof -sample_index=inuse_space -top %s)", path, path)
	return nil
}

// phaseSteady measures the idle manager, then the gardenlet reporting on a share of the shoots a minute.
func phaseSteady(ctx context.Context, c config, w *fleetWorld, m *harness.Manager, r *report) error {
	s := &r.steady
	if s.waited = time.Until(r.createdEnd.Add(registryCacheStartSpread)); s.waited > 0 {
		harness.Logf("steady state: waiting %s until the registry cache's first syncs are done", s.waited.Round(time.Second))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.waited):
		}
	}
	harness.Logf("steady state: %s idle baseline, then %.0f%% of the shoots a minute for %s", c.idleWindow, 100*c.touchPerMinute, c.steady)
	// What the window allocates, by function: the difference of the heap profiles' alloc_space taken before the
	// first and after the second idle baseline (the collections the two profiles force are outside the baselines).
	if err := writeHeapProfile(ctx, m, c.workDir, "heap-steady-before.pb.gz"); err != nil {
		return err
	}
	cpu0, err := m.CPUTime()
	if err != nil {
		return err
	}
	idleFrom, err := readCounters(ctx, m, w)
	if err != nil {
		return err
	}
	cpu1, err := cpuAfter(ctx, m, c.idleWindow)
	if err != nil {
		return err
	}
	s.idleCPU = cpu1 - cpu0
	before, err := readCounters(ctx, m, w)
	if err != nil {
		return err
	}
	s.idleBackground = before.minus(idleFrom).background
	s.events = max(1, int(c.touchPerMinute*float64(c.runtimes)*c.steady.Minutes()+0.5))
	interval := c.steady / time.Duration(s.events)
	// Where the CPU of the events goes: a profile of the whole event window, next to the heap profiles.
	cpuProfile := filepath.Join(c.workDir, "cpu-steady.pb.gz")
	profiled := make(chan error, 1)
	go func() { profiled <- m.CPUProfile(ctx, c.steady, cpuProfile) }()
	start := time.Now()
	for k := range s.events {
		// A stride through the Runtimes' shoots: each event is about another shoot.
		if err := w.touchShoot(ctx, keb.ShootName((k*7919)%c.runtimes), time.Now()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(time.Duration(k+1) * interval))):
		}
	}
	after, idleAt, err := waitIdle(ctx, m, w, 0, c.quiet, c.timeout)
	if err != nil {
		return err
	}
	s.window = idleAt.Sub(start)
	if err := <-profiled; err != nil {
		return err
	}
	harness.Logf("CPU profile of the events: %s (go tool pprof -top %s)", cpuProfile, cpuProfile)
	cpu2, err := m.CPUTime()
	if err != nil {
		return err
	}
	s.cpu = cpu2 - cpu1
	s.counters = after.minus(before)
	s.load = harness.LoadAvg()
	// A second baseline after the events: the idle rate drifts (timers, the collector), and one side alone moved
	// the per-event figure by about a millisecond at 1,000 Runtimes.
	cpu3, err := cpuAfter(ctx, m, c.idleWindow)
	if err != nil {
		return err
	}
	s.idleAfterCPU = cpu3 - cpu2
	if err := writeHeapProfile(ctx, m, c.workDir, "heap-steady-after.pb.gz"); err != nil {
		return err
	}
	harness.Logf("allocations of the steady state: go tool pprof -sample_index=alloc_space -diff_base %s %s",
		filepath.Join(c.workDir, "heap-steady-before.pb.gz"), filepath.Join(c.workDir, "heap-steady-after.pb.gz"))
	return nil
}

// cpuAfter waits d and returns the manager's CPU time then.
func cpuAfter(ctx context.Context, m *harness.Manager, d time.Duration) (time.Duration, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	return m.CPUTime()
}

// phaseRestart starts a new manager on the converged fleet and waits until it is idle again.
func phaseRestart(ctx context.Context, c config, w *fleetWorld, args []string, r *report) error {
	harness.Logf("restarting the manager")
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-2.log"), "runtime", args)
	if err != nil {
		return err
	}
	defer m.Stop()
	// Where the restart's CPU goes (its first half minute: the caches' lists and the first pass over everything).
	cpuProfile := filepath.Join(c.workDir, "cpu-restart.pb.gz")
	profiled := make(chan error, 1)
	go func() { profiled <- m.CPUProfile(ctx, 30*time.Second, cpuProfile) }()
	// Every Runtime and its shoot (reaper), every GardenerCluster, once.
	var first time.Time
	counters, idleAt, err := waitIdleFirst(ctx, m, w, 2*c.runtimes+c.runtimes+c.extra, c.quiet, c.timeout, &first)
	if err != nil {
		return err
	}
	if err := <-profiled; err != nil {
		return err
	}
	harness.Logf("CPU profile of the restart: %s", cpuProfile)
	r.restart = phaseResult{counters: counters, busy: idleAt.Sub(m.Started()), load: harness.LoadAvg()}
	r.restartFirst = first.Sub(m.Started())
	if err := r.restart.finish(ctx, w, m); err != nil {
		return err
	}
	return writeHeapProfile(ctx, m, c.workDir, "heap-restarted.pb.gz")
}
