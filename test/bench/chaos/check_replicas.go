package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The invariants of a run with several replicas (leader election), as named in the report.
const (
	invOneWriter = "no write by a replica that does not hold the lease"
	invStepDown  = "a deposed leader is gone before its lease expires"
	invTakeover  = "the standby takes over within lease duration + renew deadline + 30 s"
)

// replicaInvariants are checked only when several replicas ran.
var replicaInvariants = []string{invOneWriter, invStepDown, invTakeover}

// leaseTiming is the leader election's timing (controller-runtime's defaults, which the manager ships with).
type leaseTiming struct {
	Duration, RenewDeadline, RetryPeriod time.Duration
}

// takeoverBound is the longest take-over the run accepts.
func (l leaseTiming) takeoverBound() time.Duration {
	return l.Duration + l.RenewDeadline + 30*time.Second
}

// leaseRecord is one version of the leader Lease as the KCP's API server served it (Duration: its
// spec.leaseDurationSeconds).
type leaseRecord struct {
	Holder         string
	Acquire, Renew time.Time
	Duration       time.Duration
}

// replicaWrite is a write a replica's proxy forwarded to an API server (Target: "kcp" or "garden").
type replicaWrite struct {
	Replica, Target string
	At              time.Time
	Method, Path    string
	Code            int
}

// replicaProc is one manager process of a replica. Identity is its leader election identity, known once it wrote the
// Lease ("" when it never did); Ended is zero while it runs.
type replicaProc struct {
	Replica, Identity string
	Started, Ended    time.Time
}

// leaderFault is a SIGKILL of the leader ("kill") or its partition from the KCP ("partition"): the lease holder at
// the time, and the first other holder after it (TakenOver is its acquire time; zero when none came).
type leaderFault struct {
	Kind              string
	At                time.Time
	Replica, Holder   string
	TakenOver         time.Time
	NewHolder         string
	PartitionEnded    time.Time
	InFlight, Settled int
	// ToReady are the times from the fault to Ready of the Runtimes that were not Ready at the fault.
	ToReady []time.Duration
}

// guardedWrite reports whether a write is one the lease guards: everything but the Lease itself and Events.
func guardedWrite(path string) bool {
	return !strings.Contains(path, "/leases/") && !strings.Contains(path, "/events")
}

// checkReplicas returns the broken invariants of leader election.
func checkReplicas(w world) []violation {
	var out []violation
	out = append(out, checkWriters(w)...)
	out = append(out, checkStepDown(w)...)
	for _, f := range w.Faults {
		switch d := f.TakenOver.Sub(f.At); {
		case f.TakenOver.IsZero():
			out = append(out, violation{invTakeover, fmt.Sprintf("%s of leader %s at %s: no other replica took the lease", f.Kind, f.Replica, stamp(f.At))})
		case d > w.Lease.takeoverBound():
			out = append(out, violation{invTakeover, fmt.Sprintf("%s of leader %s at %s: taken over after %s (bound %s)", f.Kind, f.Replica, stamp(f.At), d.Round(time.Millisecond), w.Lease.takeoverBound())})
		}
	}
	return out
}

// checkWriters holds every guarded write against the Lease: the process that sent it must have held the lease (a
// version of the Lease naming it, renewed at most the lease duration before the write arrived) and nobody else may
// have taken the lease since that version. The lease duration is the bound, not the leader's renew deadline: no
// standby may take the lease earlier (checkStepDown holds the leader to the same bound), and a request the leader
// sent just before it gave up arrives later on a loaded machine (13.2 s after the last renewal beside test-olm, where
// renew deadline + retry period + 1 s allowed 13 s) without ever overlapping another leader.
func checkWriters(w world) []violation {
	var out []violation
	leases := sortedLeases(w.Leases)
	for _, wr := range w.Writes {
		if !guardedWrite(wr.Path) {
			continue
		}
		what := fmt.Sprintf("%s %s %s by replica %s", stamp(wr.At), wr.Method, wr.Path, wr.Replica)
		p, ok := procAt(w.Procs, wr.Replica, wr.At)
		if !ok || p.Identity == "" {
			out = append(out, violation{invOneWriter, what + ": the process never held the lease"})
			continue
		}
		last := -1
		for i, l := range leases {
			if l.Holder == p.Identity && !l.Renew.After(wr.At.Add(time.Millisecond)) {
				last = i
			}
		}
		if last < 0 {
			out = append(out, violation{invOneWriter, what + ": before its process held the lease"})
			continue
		}
		l := leases[last]
		allowance := l.Duration
		if allowance == 0 {
			allowance = w.Lease.Duration
		}
		if wr.At.After(l.Renew.Add(allowance)) {
			out = append(out, violation{invOneWriter, fmt.Sprintf("%s: %s after its last renewal (allowed %s)", what, wr.At.Sub(l.Renew).Round(time.Millisecond), allowance)})
			continue
		}
		for _, o := range leases[last+1:] {
			if o.Holder != p.Identity && !o.Renew.After(wr.At) {
				out = append(out, violation{invOneWriter, fmt.Sprintf("%s: the lease went to %q at %s", what, o.Holder, stamp(o.Renew))})
				break
			}
		}
	}
	return out
}

// checkStepDown: when the lease changes hands, the process that held it must have ended before its lease expired
// (its last renewal + the lease duration), the earliest moment a standby may take the lease: a SIGKILLed leader
// at once, a partitioned one when it notices it cannot renew. A process that ends later may have reconciled
// alongside the new leader, whether or not it happened to write then.
func checkStepDown(w world) []violation {
	var out []violation
	leases := sortedLeases(w.Leases)
	for i := 1; i < len(leases); i++ {
		prev, next := leases[i-1], leases[i]
		if prev.Holder == "" || next.Holder == "" || next.Holder == prev.Holder {
			continue
		}
		d := prev.Duration
		if d == 0 {
			d = w.Lease.Duration
		}
		expiry := prev.Renew.Add(d)
		p, ok := procOf(w.Procs, prev.Holder)
		switch {
		case !ok:
			out = append(out, violation{invStepDown, fmt.Sprintf("lease holder %q is no known process", prev.Holder)})
		case p.Ended.IsZero():
			out = append(out, violation{invStepDown, fmt.Sprintf("replica %s (%s) still ran after replica %s took the lease at %s",
				p.Replica, prev.Holder, replicaOfHolder(w.Procs, next.Holder), stamp(next.Acquire))})
		case p.Ended.After(expiry):
			out = append(out, violation{invStepDown, fmt.Sprintf("replica %s ended at %s, %s after its lease expired (last renewal %s + %s); replica %s took the lease at %s",
				p.Replica, stamp(p.Ended), p.Ended.Sub(expiry).Round(time.Millisecond), stamp(prev.Renew), d, replicaOfHolder(w.Procs, next.Holder), stamp(next.Acquire))})
		}
	}
	return out
}

func sortedLeases(in []leaseRecord) []leaseRecord {
	out := append([]leaseRecord(nil), in...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Renew.Before(out[j].Renew) })
	return out
}

// procAt is the process of replica that sent a request that reached its proxy at t: the one that ran at t or, when
// none did, the last one that had ended by then. The proxy stamps a request when its handler starts, which on a
// loaded machine can be a few milliseconds after a SIGKILLed leader sent it (seen: 9 ms); no other process of the
// replica existed yet to send it. Whether that process still held the lease is checkWriters' question.
func procAt(procs []replicaProc, replica string, t time.Time) (replicaProc, bool) {
	var last replicaProc
	found := false
	for _, p := range procs {
		if p.Replica != replica || p.Started.After(t) {
			continue
		}
		if p.Ended.IsZero() || !p.Ended.Before(t) {
			return p, true
		}
		if !found || p.Started.After(last.Started) {
			last, found = p, true
		}
	}
	return last, found
}

func procOf(procs []replicaProc, identity string) (replicaProc, bool) {
	for _, p := range procs {
		if p.Identity == identity {
			return p, true
		}
	}
	return replicaProc{}, false
}

func replicaOfHolder(procs []replicaProc, identity string) string {
	if p, ok := procOf(procs, identity); ok {
		return p.Replica
	}
	return "?"
}
