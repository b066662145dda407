package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
)

// phaseResult is what one manager process did until it was idle.
type phaseResult struct {
	counters
	// busy is the time from the phase's start (first GardenerCluster created / process started) to the last change.
	busy time.Duration
	// ready and written count Ready GardenerClusters and Secrets with an issued kubeconfig at the end of the phase;
	// usable counts Secrets whose kubeconfig was read back in full and is complete (phase 1 only).
	ready, written, usable int
	reasons                map[string]int
	peakRSS                int64
	// cpu is the manager process's CPU time (user+system) over its whole life until the end of the phase.
	cpu time.Duration
}

type report struct {
	cfg                config
	loadStart, loadEnd string
	started            time.Time
	shootsReady        time.Duration
	created, converged time.Duration
	first, restart     phaseResult
	// gardenCPU is the CPU time of the harness process during phase 1: mostly the in-process gardener-apiserver.
	gardenCPU time.Duration
}

func (r report) print(out io.Writer) {
	c := r.cfg
	keys := "pooled (4 RSA keys reused by the in-process gardener-apiserver)"
	if c.realKeys {
		keys = "real (one 3072-bit RSA key per request)"
	}
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	p("")
	p("== kubeconfig load harness: N=%d ==", c.n)
	p("machine: %d CPUs, %s memory; load average (1/5/15 min) at start %s, at end %s", runtime.NumCPU(), harness.MemTotal(), r.loadStart, r.loadEnd)
	p("manager: --gardener-cluster-workers=%d --gardener-qps=%g --gardener-burst=%d, leader election off, metrics scraped over HTTP",
		c.workers, c.gardenerQPS, c.gardenerBurst)
	p("garden: gardener-apiserver in-process, simulated gardenlet, no runtime API servers; admin kubeconfig keys: %s", keys)
	p("setup (not measured): %d shoots created and reconciled by the simulated gardenlet in %s", c.n, r.shootsReady.Round(time.Second))
	p("")
	p("phase 1: %d new GardenerClusters (manager running, clusters created by %d parallel clients)", c.n, 16)
	p("  created all GardenerClusters in      %s", r.created.Round(time.Millisecond))
	p("  time to converge                     %s   (from the first create until %d/%d Secrets written and %d/%d Ready)",
		r.converged.Round(time.Second), r.first.written, c.n, r.first.ready, c.n)
	p("  Secrets read back, complete          %d/%d", r.first.usable, c.n)
	r.first.printCounters(p, c.n)
	p("  manager peak RSS (VmHWM)             %s", harness.MiB(r.first.peakRSS))
	p("  CPU time                             manager %s; harness process (in-process gardener-apiserver, gardenlet) %s",
		r.first.cpu.Round(10*time.Millisecond), r.gardenCPU.Round(10*time.Millisecond))
	p("")
	p("phase 2: manager restarted on the converged clusters (nothing due)")
	p("  idle after                           %s   (from process start: cache sync + one reconcile of each cluster)", r.restart.busy.Round(time.Millisecond))
	p("  GardenerClusters Ready / Secrets     %d / %d", r.restart.ready, r.restart.written)
	r.restart.printCounters(p, c.n)
	p("  manager peak RSS (VmHWM)             %s", harness.MiB(r.restart.peakRSS))
	p("  manager CPU time                     %s", r.restart.cpu.Round(10*time.Millisecond))
	p("")
	p("work dir (kubeconfigs, manager logs): %s; total wall time %s", c.workDir, time.Since(r.started).Round(time.Second))
}

func (f phaseResult) printCounters(p func(string, ...any), n int) {
	reasons := make([]string, 0, len(f.reasons))
	for r, k := range f.reasons {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, k))
	}
	slices.Sort(reasons)
	p("  condition reasons when idle          %s", strings.Join(reasons, ", "))
	p("  Gardener adminkubeconfig requests    %.0f (success %.0f) [kim_gardener_kubeconfig_requests_total]; garden POSTs %.0f [rest_client_requests_total]",
		f.gardenerRequests, f.gardenerSuccess, f.gardenPosts)
	rate := 0.0
	if f.busy > 0 {
		rate = f.reconciles / f.busy.Seconds()
	}
	p("  reconciles                           %.0f (%.2f per cluster, %.1f/s over %s), errors %.0f",
		f.reconciles, f.reconciles/float64(n), rate, f.busy.Round(time.Millisecond), f.reconcileErrors)
	methods := make([]string, 0, len(f.kcpByMethod))
	for m, v := range f.kcpByMethod {
		methods = append(methods, fmt.Sprintf("%s %.0f", m, v))
	}
	slices.Sort(methods)
	p("  API requests                         KCP %.0f (%.2f per cluster: %s), garden %.0f",
		f.kcpRequests, f.kcpRequests/float64(n), strings.Join(methods, ", "), f.gardenRequests)
}
