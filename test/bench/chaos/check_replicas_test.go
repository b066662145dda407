package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// replicatedWorld is healthyWorld run by two replicas: a's first process led until it was SIGKILLed at t0+1s (its
// last renewal at t0; one request it sent reached the proxy 9 ms after), b's took the lease at t0+16s; a's second
// process is the standby since t0+20s.
func replicatedWorld(t *testing.T) world {
	w := healthyWorld(t)
	w.Replicated, w.Lease = true, shippedLease
	for at := -40 * time.Second; at <= 0; at += 2 * time.Second {
		w.Leases = append(w.Leases, leaseRecord{Holder: "h_a1", Acquire: t0.Add(-40 * time.Second), Renew: t0.Add(at), Duration: 15 * time.Second})
	}
	for at := 16 * time.Second; at <= 40*time.Second; at += 2 * time.Second {
		w.Leases = append(w.Leases, leaseRecord{Holder: "h_b1", Acquire: t0.Add(16 * time.Second), Renew: t0.Add(at), Duration: 15 * time.Second})
	}
	w.Procs = []replicaProc{
		{Replica: "a", Identity: "h_a1", Started: t0.Add(-60 * time.Second), Ended: t0.Add(time.Second)},
		{Replica: "b", Identity: "h_b1", Started: t0.Add(-50 * time.Second)},
		{Replica: "a", Started: t0.Add(20 * time.Second)},
	}
	w.Writes = []replicaWrite{
		{Replica: "a", Target: "kcp", At: t0.Add(-30 * time.Second), Method: "PATCH", Path: "/apis/infrastructuremanager.kyma-project.io/v1/namespaces/kcp-system/runtimes/a/status"},
		{Replica: "a", Target: "garden", At: t0.Add(500 * time.Millisecond), Method: "PATCH", Path: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/c-a"},
		// Sent by a's first process before its SIGKILL, stamped by the proxy after the harness saw it end.
		{Replica: "a", Target: "garden", At: t0.Add(time.Second + 9*time.Millisecond), Method: "POST", Path: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots"},
		{Replica: "b", Target: "kcp", At: t0.Add(17 * time.Second), Method: "PUT", Path: "/api/v1/namespaces/kcp-system/secrets/kubeconfig-a"},
		{Replica: "a", Target: "kcp", At: t0.Add(25 * time.Second), Method: "PUT", Path: "/apis/coordination.k8s.io/v1/namespaces/kcp-system/leases/" + leaseName},
		{Replica: "b", Target: "kcp", At: t0.Add(16 * time.Second), Method: "POST", Path: "/api/v1/namespaces/kcp-system/events"},
	}
	w.Faults = []leaderFault{{Kind: "kill", At: t0.Add(time.Second), Replica: "a", Holder: "h_a1", TakenOver: t0.Add(16 * time.Second), NewHolder: "h_b1"}}
	return w
}

func TestCheckReplicasHoldsOnAHealthyWorld(t *testing.T) {
	if v := check(replicatedWorld(t)); len(v) != 0 {
		t.Fatalf("violations on a healthy world of two replicas: %v", v)
	}
}

// Each invariant of leader election fails on a world that breaks it, and only that invariant.
func TestCheckReplicasFindsEveryBrokenInvariant(t *testing.T) {
	guarded := func(replica string, at time.Duration) replicaWrite {
		return replicaWrite{Replica: replica, Target: "garden", At: t0.Add(at), Method: "DELETE", Path: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/c-b"}
	}
	cases := []struct {
		name, invariant, detail string
		breakIt                 func(w *world)
	}{
		{"the standby writes", invOneWriter, "before its process held the lease", func(w *world) { w.Writes = append(w.Writes, guarded("b", -10*time.Second)) }},
		{"a process that never held the lease writes", invOneWriter, "never held the lease", func(w *world) { w.Writes = append(w.Writes, guarded("a", 30*time.Second)) }},
		{"a killed leader's request arrives after the take-over", invOneWriter, "after its last renewal", func(w *world) {
			w.Writes = append(w.Writes, guarded("a", 17*time.Second))
		}},
		{"a leader's request arrives after its lease expired", invOneWriter, "after its last renewal", func(w *world) {
			w.Procs[0].Ended = t0.Add(14900 * time.Millisecond) // it stepped down in time, its request was late
			w.Writes = append(w.Writes, guarded("a", 15500*time.Millisecond))
		}},
		{"a deposed leader outlives its lease", invStepDown, "2s after its lease expired", func(w *world) { w.Procs[0].Ended = t0.Add(17 * time.Second) }},
		{"a deposed leader never ends", invStepDown, "still ran after", func(w *world) { w.Procs[0].Ended = time.Time{} }},
		{"no take-over", invTakeover, "no other replica took the lease", func(w *world) { w.Faults[0].TakenOver = time.Time{} }},
		{"a slow take-over", invTakeover, "taken over after 1m10s", func(w *world) { w.Faults[0].TakenOver = t0.Add(71 * time.Second) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := replicatedWorld(t)
			tc.breakIt(&w)
			onlyBroken(t, w, tc.invariant, tc.detail)
		})
	}
}

// A leader that gave up renewing may still write until its lease expires: no standby can hold the lease before.
func TestCheckReplicasAllowsWritesInsideTheLease(t *testing.T) {
	w := replicatedWorld(t)
	w.Procs[0].Ended = t0.Add(14500 * time.Millisecond)
	w.Writes = append(w.Writes, replicaWrite{Replica: "a", Target: "garden", At: t0.Add(14 * time.Second), Method: "DELETE", Path: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/c-b"})
	if v := check(w); len(v) != 0 {
		t.Fatalf("a write 14 s after the last renewal of a 15 s lease: %v", v)
	}
}

// Two leaders at once: the deposed one writes after the other took the lease; both invariants see it.
func TestCheckReplicasFindsTwoWritersAtOnce(t *testing.T) {
	w := replicatedWorld(t)
	w.Procs[0].Ended = t0.Add(20 * time.Second)
	w.Writes = append(w.Writes, replicaWrite{Replica: "a", Target: "garden", At: t0.Add(13 * time.Second), Method: "PATCH", Path: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/c-a"})
	w.Leases = append(w.Leases, leaseRecord{Holder: "h_b1", Acquire: t0.Add(12 * time.Second), Renew: t0.Add(12 * time.Second)})
	got := map[string]string{}
	for _, v := range check(w) {
		got[v.Invariant] += v.Detail + "; "
	}
	if !strings.Contains(got[invOneWriter], `the lease went to "h_b1"`) || got[invStepDown] == "" || len(got) != 2 {
		t.Errorf("violations %v: want the write after the take-over and the late step-down", got)
	}
}

func TestPartitionsAreSpreadOverTheFaults(t *testing.T) {
	var got []bool
	for i := range 6 {
		got = append(got, isPartition(i, 0.5))
	}
	if want := []bool{false, true, false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("share 0.5: %v, want %v", got, want)
	}
	for i := range 5 {
		if isPartition(i, 0) || !isPartition(i, 1) {
			t.Errorf("fault %d: share 0 must never partition, share 1 always", i)
		}
	}
}
