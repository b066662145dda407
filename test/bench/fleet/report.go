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
	// busy is the time from the phase's start (first object created / process started) to the last change.
	busy     time.Duration
	progress progress
	peakRSS  int64
	// cpu is the manager process's CPU time (user+system) over its whole life until the end of the phase.
	cpu  time.Duration
	load string
}

// steadyResult is the steady state: events shoot status reports spread over the phase.
type steadyResult struct {
	events int
	// window is from the first event until the manager was idle again; cpu the manager's CPU time in it,
	// idleCPU in the idle baseline before it and idleAfterCPU in one after it (each of the configured idle window).
	window, cpu, idleCPU, idleAfterCPU time.Duration
	counters                           counters
	// idleBackground are the background controllers' reconciles in the idle baseline; counters.background those
	// in the window: the idle rate subtracted stands for them only when the two rates are alike.
	idleBackground map[string]float64
	// waited is how long the phase waited for the registry cache's start spread to end.
	waited time.Duration
	load   string
}

type report struct {
	cfg                config
	loadStart, loadEnd string
	started            time.Time
	setup              time.Duration
	created, converged time.Duration
	// createdEnd is when the last Runtime was created.
	createdEnd     time.Time
	first, restart phaseResult
	// restartFirst is from the restarted manager's start to its first reconcile (its caches listed).
	restartFirst time.Duration
	steady       steadyResult
	// gardenCPU is the CPU time of the harness process during phase 1: mostly the in-process API servers.
	gardenCPU time.Duration
	// convergePeaks are the manager's memory peaks while the fleet converged.
	convergePeaks harness.MemoryPeaks
	// seed is set for a seeded fleet (-seed).
	seed seedResult
	// handover is the two-replica phase (-handover).
	handover handoverResult
}

func (r report) print(out io.Writer) {
	c := r.cfg
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	clusters := c.runtimes + c.extra
	p("")
	p("== fleet load harness: %d Runtimes, %d GardenerClusters ==", c.runtimes, clusters)
	p("machine: %d CPUs, %s memory; load average (1/5/15 min) at start %s, at end %s", runtime.NumCPU(), harness.MemTotal(), r.loadStart, r.loadEnd)
	p("manager: all controllers, --gardener-qps=%g --gardener-burst=%d, leader election off, metrics scraped over HTTP, environment %v",
		c.gardenerQPS, c.gardenerBurst, harness.ManagerEnv)
	p("garden: gardener-apiserver in-process, simulated gardenlet (create %s), one shared runtime API server; 4 pooled RSA keys for admin kubeconfigs",
		c.createDuration)
	if c.seed {
		sd := r.seed
		p("setup (not measured): seeded in %s: %d templates provisioned by a manager of their own in %s, then %d objects copied in %s (%d requests)",
			r.setup.Round(time.Second), sd.templates, sd.templatesReady.Round(time.Second), sd.copied, sd.copyTime.Round(time.Second), sd.requests)
		p("  the copies settled by a manager in %s (spec hashes, field ownership): Gardener %s; KCP %s", sd.settleTime.Round(time.Second),
			orNone(join(sd.settle.garden)), orNone(join(sd.settle.kcp)))
		p("")
		p("phase 1: a manager started on the seeded fleet (%d Runtimes of the plan mix trial/aws/azure/gcp, %d extra GardenerClusters)", c.runtimes, c.extra)
		p("  idle after                           %s   (%d/%d Runtimes and %d/%d GardenerClusters Ready; load average then %s)",
			r.first.busy.Round(100*time.Millisecond), r.first.progress.runtimesReady, c.runtimes, r.first.progress.clustersReady, clusters, r.first.load)
	} else {
		p("setup (not measured): %d shoots without a Runtime created in %s", c.extra, r.setup.Round(time.Second))
		p("")
		p("phase 1: %d Runtimes (plan mix trial/aws/azure/gcp) and %d extra GardenerClusters created by %d parallel clients", c.runtimes, c.extra, 16)
		p("  created in                           %s", r.created.Round(time.Millisecond))
		p("  time to converge                     %s   (until %d/%d Runtimes and %d/%d GardenerClusters Ready)",
			r.converged.Round(time.Second), r.first.progress.runtimesReady, c.runtimes, r.first.progress.clustersReady, clusters)
		p("  idle after                           %s   (load average then %s)", r.first.busy.Round(time.Second), r.first.load)
	}
	r.first.printCounters(p, c.runtimes)
	p("  manager peak RSS (VmHWM)             %s; Go heap in use when idle %s", harness.MiB(r.first.peakRSS), harness.MiB(int64(r.first.heapInuse)))
	cp := r.convergePeaks
	p("  while converging (%d samples, 1 s)   RSS up to %s, heap in use up to %s, GC goal up to %s (live heap <= half of it)",
		cp.Samples, harness.MiB(cp.RSS), harness.MiB(int64(cp.HeapInuse)), harness.MiB(int64(cp.GCGoal)))
	p("  CPU time                             manager %s; harness process (in-process API servers, gardenlet) %s",
		r.first.cpu.Round(10*time.Millisecond), r.gardenCPU.Round(10*time.Millisecond))
	p("")
	if c.steady > 0 {
		r.printSteady(p)
	}
	rs := r.restart
	p("restart: idle after %.1f s (first reconcile after %.1f s: the caches' lists), Gardener writes: %.0f, Gardener requests: %s, KCP requests: %s, reconciles: %s, peak RSS %s, heap in use %s, CPU %.1f s, load %s",
		rs.busy.Seconds(), r.restartFirst.Seconds(), rs.gardenWrites(), orNone(join(rs.garden)), orNone(join(rs.kcp)), join(rs.reconciles), harness.MiB(rs.peakRSS),
		harness.MiB(int64(rs.heapInuse)),
		rs.cpu.Seconds(), rs.load)
	if c.handover {
		h := r.handover
		p("")
		p("hand-over (two replicas, shipped lease; the leader stopped with SIGTERM, releasing the lease):")
		p("  standby warm after                   %.1f s (queues %.0f; requests while warming up: Gardener %s; KCP %s)", h.standbyWarm.Seconds(),
			h.standbyDepth, orNone(join(h.standbyBefore.garden)), orNone(join(h.standbyBefore.kcp)))
		p("  after the leader's exit              first reconcile %.1f s, idle %.1f s; Gardener writes %.0f; requests Gardener %s, KCP %s; reconciles %s",
			h.takeover.Seconds(), h.idle.Seconds(), h.after.gardenWrites(), orNone(join(h.after.garden)), orNone(join(h.after.kcp)), join(h.after.reconciles))
		p("  new leader: CPU %.1f s over its life, peak RSS %s, load %s", h.cpu.Seconds(), harness.MiB(h.peakRSS), h.load)
	}
	p("")
	p("work dir (kubeconfigs, manager logs): %s; total wall time %s", c.workDir, time.Since(r.started).Round(time.Second))
}

// printSteady prints the steady state's lines.
func (r report) printSteady(p func(string, ...any)) {
	c, s := r.cfg, r.steady
	pe := s.perEvent(c.idleWindow)
	p("steady state: %d shoot status events over %s (%.0f%% of the Runtimes' shoots a minute); load average at end %s", s.events,
		s.window.Round(time.Second), 100*c.touchPerMinute, s.load)
	p("  manager CPU                          idle %.4f s/s before, %.4f s/s after; in the window %s; per shoot event %.1f ms net of the mean idle rate (%.1f-%.1f ms with either)",
		pe.before, pe.after, s.cpu.Round(10*time.Millisecond), 1000*pe.mid, 1000*pe.low, 1000*pe.high)
	p("  reconciles                           %s", join(s.counters.reconciles))
	p("  background reconciles                idle baseline %s; window %s (waited %s for the registry cache's start spread)",
		orNone(join(s.idleBackground)), orNone(join(s.counters.background)), s.waited.Round(time.Second))
	p("  requests                             Gardener %s; KCP %s", join(s.counters.garden), join(s.counters.kcp))
	p("")
}

// eventCost is the CPU per shoot event net of the idle baseline: with the mean of the baselines before and after
// the window (mid), and with the higher and the lower of the two (low, high), in seconds; before and after are the
// two idle rates (CPU seconds per second). The baseline is most of the window's CPU at 1,000 Runtimes, so one
// measured on one side only moved the result by a millisecond per event; the spread shows how far it can.
type eventCost struct{ before, after, mid, low, high float64 }

func (s steadyResult) perEvent(idleWindow time.Duration) eventCost {
	e := eventCost{before: s.idleCPU.Seconds() / idleWindow.Seconds(), after: s.idleAfterCPU.Seconds() / idleWindow.Seconds()}
	if s.idleAfterCPU == 0 {
		e.after = e.before // no baseline after the window (an older run): the one before stands alone
	}
	net := func(rate float64) float64 {
		return (s.cpu.Seconds() - rate*s.window.Seconds()) / float64(max(s.events, 1))
	}
	e.mid = net((e.before + e.after) / 2)
	e.low, e.high = net(max(e.before, e.after)), net(min(e.before, e.after))
	return e
}

func (f phaseResult) printCounters(p func(string, ...any), runtimes int) {
	p("  reconciles                           %s; errors %s", join(f.reconciles), orNone(join(f.errors)))
	p("  Gardener requests                    %.0f (%.1f per Runtime): %s", total(f.garden), total(f.garden)/float64(runtimes), join(f.garden))
	p("  KCP requests                         %.0f: %s", total(f.kcp), join(f.kcp))
}

// join prints a map as "k v, ..." sorted by key, values rounded.
func join(m map[string]float64) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, v))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
