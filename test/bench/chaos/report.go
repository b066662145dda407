package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
)

// report is what a chaos run prints.
type report struct {
	cfg             config
	started         time.Time
	chaos, converge time.Duration
	// windows: after convergence, the wait for the shoots of deleted Runtimes to be deleted after their windows.
	windows                       time.Duration
	kills, restarts               int
	faults                        map[faultproxy.Kind]int
	requests, reads, live         int
	deletionsChecked, watches     int
	qpsRatio                      float64
	ops                           map[string]int
	violations                    []violation
	loadStart, loadChaos, loadEnd string
	replicas                      *replicaSummary
}

// replicaSummary is what a run with several replicas measured.
type replicaSummary struct {
	starts, lostLease         int
	leaseDurations            []time.Duration
	faults                    []leaderFault
	stepDowns                 []stepDown
	handoverReads             int
	guardedKCP, guardedGarden int
}

// stepDown is how long a partitioned leader took to end: from the partition and from its last renewal.
type stepDown struct {
	afterPartition, afterRenewal time.Duration
	ended                        bool
}

// handoverTail is how long after a take-over the Secret reads still count as reads during the hand-over.
const handoverTail = 5 * time.Second

func replicaReport(w world, rs *replicaSet, reader *secretReader) *replicaSummary {
	s := &replicaSummary{faults: w.Faults, leaseDurations: rs.lease.leaseDurations()}
	for _, rp := range rs.reps {
		rp.mu.Lock()
		s.starts += len(rp.procs)
		s.lostLease += rp.lostLease
		rp.mu.Unlock()
	}
	leases := sortedLeases(w.Leases)
	for _, f := range w.Faults {
		end := f.TakenOver
		if end.IsZero() {
			end = f.At.Add(w.Lease.takeoverBound())
		}
		s.handoverReads += reader.readsBetween(f.At, end.Add(handoverTail))
		if f.Kind != "partition" {
			continue
		}
		var d stepDown
		if p, ok := procOf(w.Procs, f.Holder); ok && !p.Ended.IsZero() {
			d.ended, d.afterPartition = true, p.Ended.Sub(f.At)
			for _, l := range leases {
				if l.Holder == f.Holder && !l.Renew.After(f.At) {
					d.afterRenewal = p.Ended.Sub(l.Renew)
				}
			}
		}
		s.stepDowns = append(s.stepDowns, d)
	}
	for _, wr := range w.Writes {
		if !guardedWrite(wr.Path) {
			continue
		}
		if wr.Target == "garden" {
			s.guardedGarden++
		} else {
			s.guardedKCP++
		}
	}
	return s
}

func (s *replicaSummary) print(p func(string, ...any)) {
	kills, partitions := 0, 0
	var takeovers, toReady []time.Duration
	inFlight, settled := 0, 0
	for _, f := range s.faults {
		if f.Kind == "partition" {
			partitions++
		} else {
			kills++
		}
		if !f.TakenOver.IsZero() {
			takeovers = append(takeovers, f.TakenOver.Sub(f.At))
		}
		inFlight += f.InFlight
		settled += f.Settled
		toReady = append(toReady, f.ToReady...)
	}
	p("replicas: %d processes started, %d exited on a lost lease; lease duration %v (renew deadline %s, retry %s)",
		s.starts, s.lostLease, s.leaseDurations, shippedLease.RenewDeadline, shippedLease.RetryPeriod)
	p("leader faults: %d SIGKILLs, %d partitions from the KCP; take-over after the fault: %s", kills, partitions, durations(takeovers))
	for i, f := range s.faults {
		took := "none"
		if !f.TakenOver.IsZero() {
			took = f.TakenOver.Sub(f.At).Round(100 * time.Millisecond).String()
		}
		p("  fault %d: %s of leader %s at %s, taken over after %s; %d Runtimes in flight, %d Ready after %s", i+1, f.Kind, f.Replica, stamp(f.At), took, f.InFlight, f.Settled, durations(f.ToReady))
	}
	for i, d := range s.stepDowns {
		if d.ended {
			p("  partition %d: the deposed leader ended %s after the partition, %s after its last renewal (lease duration %s)", i+1,
				d.afterPartition.Round(100*time.Millisecond), d.afterRenewal.Round(100*time.Millisecond), shippedLease.Duration)
		} else {
			p("  partition %d: the deposed leader never ended", i+1)
		}
	}
	p("Runtimes in flight at the faults: %d, Ready after the fault: %d, time to Ready %s", inFlight, settled, durations(toReady))
	p("kubeconfig Secret reads during hand-overs (fault to take-over + %s): %d; guarded writes audited: %d to the KCP, %d to the garden", handoverTail, s.handoverReads, s.guardedKCP, s.guardedGarden)
}

// durations is "min/median/max" of ds ("-" when empty).
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Sorted(slices.Values(ds))
	r := func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
	return fmt.Sprintf("min %s, median %s, max %s", r(s[0]), r(s[len(s)/2]), r(s[len(s)-1]))
}

func (r *report) print(out io.Writer) {
	c := r.cfg
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	p("chaos: %d runtimes, %.0f%% Gardener faults, kills every %s-%s, window %s, QPS %g burst %d, seed %d",
		c.runtimes, 100*c.faultShare, c.killMin, c.killMax, c.grace, c.gardenerQPS, c.gardenerBurst, c.seed)
	p("machine: %d CPUs, load average start %s, end of chaos %s, end %s; memory %s", runtime.NumCPU(), r.loadStart, r.loadChaos, r.loadEnd, harness.MemTotal())
	if r.replicas == nil {
		p("chaos phase: %s; kills survived: %d (manager started %d times)", r.chaos.Round(time.Second), r.kills, r.restarts)
	} else {
		p("chaos phase: %s; %d replicas with leader election", r.chaos.Round(time.Second), c.replicas)
		r.replicas.print(p)
	}
	p("faults injected: %d of %d Gardener requests %s; watches forwarded while faulty: %d", total(r.faults), r.requests, kinds(r.faults), r.watches)
	p("workload: %s; %d runtimes live at the end", opsLine(r.ops), r.live)
	p("kubeconfig Secret reads: %d; shoot deletions checked against their windows: %d; worst request rate: %.0f%% of the allowance", r.reads, r.deletionsChecked, 100*r.qpsRatio)
	p("time to converge after the last fault: %s; then for the pending shoot deletions: %s", r.converge.Round(100*time.Millisecond),
		r.windows.Round(100*time.Millisecond))
	broken := map[string]bool{}
	for _, v := range r.violations {
		broken[v.Invariant] = true
	}
	list := invariants
	if r.replicas != nil {
		list = append(slices.Clone(invariants), replicaInvariants...)
	}
	for _, inv := range list {
		state := "held"
		if broken[inv] {
			state = "BROKEN"
		}
		p("  %-6s %s", state, inv)
	}
	for i, v := range r.violations {
		if i == 20 {
			p("  ... %d more", len(r.violations)-20)
			break
		}
		p("  violation: %s", v)
	}
	if len(r.violations) == 0 {
		p("result: every invariant held")
	} else {
		p("result: %d violations", len(r.violations))
	}
}

func total(m map[faultproxy.Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func kinds(m map[faultproxy.Kind]int) string {
	out := "("
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s: %d", k, m[k])
	}
	return out + ")"
}

func opsLine(m map[string]int) string {
	out := ""
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}
