package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
)

// handoverResult is the two-replica phase (-handover): a leader and a warm standby with the shipped leader election,
// the leader stopped as a rollout stops it (SIGTERM: it releases the lease), the standby taking over.
type handoverResult struct {
	// standbyWarm is how long the standby took from its start until its queues held the fleet and its caches stopped
	// listing; standbyBefore its counters then (what it requested while warming up, before the lease).
	standbyWarm   time.Duration
	standbyBefore counters
	standbyDepth  float64
	// takeover is from the leader's exit until the standby's first reconcile; idle from the leader's exit until the
	// standby was idle again; after are the standby's counters from the leader's exit until then.
	takeover, idle time.Duration
	after          counters
	cpu            time.Duration
	peakRSS        int64
	load           string
}

// phaseHandover starts a leader on the converged fleet and waits until it is idle, starts a standby and waits until
// its caches are filled, stops the leader and measures the standby's take-over: the time until it is idle and what
// it writes (the target is nothing).
func phaseHandover(ctx context.Context, c config, w *fleetWorld, args []string, r *report) error {
	h := &r.handover
	harness.Logf("hand-over: starting the leader")
	leader, err := harness.StartReplica(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-leader.log"), args)
	if err != nil {
		return err
	}
	defer leader.Stop()
	if _, _, err := waitIdle(ctx, leader, w, 3*c.runtimes+c.extra, c.quiet, c.timeout); err != nil {
		return fmt.Errorf("hand-over: the leader: %w", err)
	}
	harness.Logf("hand-over: leader idle; starting the standby")
	standby, err := harness.StartReplica(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-standby.log"), args)
	if err != nil {
		return err
	}
	defer standby.Stop()
	// Warm: its queues hold an item per Runtime at least (the warm-up fills them from the caches' events), and
	// neither the queues nor its requests change for the quiet time. It reconciles nothing without the lease.
	read := func(ctx context.Context) (counters, error) { return readCounters(ctx, standby, w) }
	warm, _, err := harness.WaitIdle(ctx, read, func(s counters) harness.Activity {
		return harness.Activity{Work: s.depth + total(s.garden) + total(s.kcp), Enough: s.depth >= float64(c.runtimes),
			Description: fmt.Sprintf("standby queues %.0f, requests Gardener %v, KCP %v", s.depth, s.garden, s.kcp)}
	}, c.quiet, c.timeout)
	if err != nil {
		return fmt.Errorf("hand-over: the standby: %w", err)
	}
	if n := total(warm.reconciles); n != 0 {
		return fmt.Errorf("hand-over: the standby reconciled %.0f times without the lease", n)
	}
	h.standbyWarm, h.standbyBefore, h.standbyDepth = time.Since(standby.Started()), warm, warm.depth
	harness.Logf("hand-over: standby warm after %s (queues %.0f); stopping the leader", h.standbyWarm.Round(100*time.Millisecond), warm.depth)
	leader.Stop()
	stopped := leader.Ended()
	var first time.Time
	after, idleAt, err := harness.WaitIdle(ctx, read, func(s counters) harness.Activity {
		if first.IsZero() && total(s.reconciles) > 0 {
			first = time.Now()
		}
		return harness.Activity{Work: total(s.reconciles) + total(s.garden), Busy: s.depth != 0 || s.active != 0,
			Enough:      total(s.reconciles) >= float64(3*c.runtimes+c.extra),
			Description: fmt.Sprintf("reconciles %v, queues %.0f, busy workers %.0f", s.reconciles, s.depth, s.active)}
	}, c.quiet, c.timeout)
	if err != nil {
		return fmt.Errorf("hand-over: the new leader: %w", err)
	}
	h.takeover, h.idle, h.after, h.load = first.Sub(stopped), idleAt.Sub(stopped), after.minus(warm), harness.LoadAvg()
	if h.cpu, err = standby.CPUTime(); err != nil {
		return err
	}
	if h.peakRSS, err = standby.PeakRSS(); err != nil {
		return err
	}
	harness.Logf("hand-over: the standby reconciled from %.1f s after the leader stopped, idle after %.1f s; Gardener %s; KCP %s",
		h.takeover.Seconds(), h.idle.Seconds(), orNone(join(h.after.garden)), orNone(join(h.after.kcp)))
	return nil
}
