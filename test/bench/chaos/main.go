// Command chaos is the chaos harness (issue 18; `make chaos`, not part of `make test`). On garden-in-a-box it runs
// the production manager in a child process behind a fault proxy that fails a share of its Gardener requests
// (429 with Retry-After, 500, 503, held until timeout) and drops its watches, SIGKILLs the manager at random
// moments and starts it again, while a KEB-like workload creates Runtimes, changes their workers, deletes them
// (short grace window) and creates them again, and a reader reads every kubeconfig Secret continuously. With
// -replicas 2 it runs two managers with leader election, as the Deployment does, each behind its own proxies in
// front of the garden and the KCP, and SIGKILLs the leader or partitions it from the KCP (replicas.go). Then the
// faults stop; once the world has converged, the invariants are checked from the API servers (check.go,
// check_replicas.go). It prints a report and exits non-zero when an invariant broke.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
)

// config are the harness's settings (flags).
type config struct {
	duration           time.Duration
	runtimes, kills    int
	faultShare         float64
	killMin, killMax   time.Duration
	grace              time.Duration
	opInterval         time.Duration
	gardenerQPS        float64
	gardenerBurst      int
	healthInterval     time.Duration
	convergeTimeout    time.Duration
	managerBin         string
	workDir            string
	seed               uint64
	createDuration     time.Duration
	readInterval       time.Duration
	holdMax            time.Duration
	watchDropMax       time.Duration
	runtimeWorkers     int
	clusterWorkers     int
	expectKillsAtLeast int
	// replicas > 1 runs the manager as the Deployment does, with leader election; the faults then hit the leader:
	// SIGKILLs and, for partitionShare of them, a partition from the KCP for partitionFor.
	replicas       int
	partitionShare float64
	partitionFor   time.Duration
}

func defaults() config {
	return config{duration: 30 * time.Minute, runtimes: 100, faultShare: 0.3, killMin: 20 * time.Second, killMax: 90 * time.Second,
		grace: time.Minute, opInterval: 2 * time.Second, gardenerQPS: 10, gardenerBurst: 20, healthInterval: 3 * time.Second,
		convergeTimeout: 15 * time.Minute, seed: uint64(time.Now().UnixNano()), createDuration: 3 * time.Second,
		readInterval: 300 * time.Millisecond, holdMax: 10 * time.Second, watchDropMax: 60 * time.Second,
		runtimeWorkers: 10, clusterWorkers: 10, replicas: 1, partitionShare: 0.5, partitionFor: 30 * time.Second}
}

func main() {
	c := defaults()
	flag.DurationVar(&c.duration, "duration", c.duration, "length of the chaos phase (faults, kills, workload)")
	flag.IntVar(&c.runtimes, "runtimes", c.runtimes, "number of Runtimes")
	flag.IntVar(&c.kills, "kills", 0, "at most this many SIGKILLs of the manager (0: as many as fit into -duration)")
	flag.IntVar(&c.expectKillsAtLeast, "min-kills", 0, "fail when fewer kills (with -replicas > 1: leader faults) happened")
	flag.Float64Var(&c.faultShare, "faults", c.faultShare, "share of the manager's Gardener requests that fail (0..1)")
	flag.DurationVar(&c.killMin, "kill-min", c.killMin, "shortest time between two kills")
	flag.DurationVar(&c.killMax, "kill-max", c.killMax, "longest time between two kills")
	flag.DurationVar(&c.grace, "grace", c.grace, "deletion window of every plan (deletion.defaultGracePeriod)")
	flag.DurationVar(&c.opInterval, "op-interval", c.opInterval, "time between two workload steps (update, delete, re-create)")
	flag.Float64Var(&c.gardenerQPS, "gardener-qps", c.gardenerQPS, "--gardener-qps of the manager (the rate invariant holds the proxy's counts against it)")
	flag.IntVar(&c.gardenerBurst, "gardener-burst", c.gardenerBurst, "--gardener-burst of the manager")
	flag.DurationVar(&c.convergeTimeout, "converge-timeout", c.convergeTimeout, "how long the world may take to converge after the faults")
	flag.StringVar(&c.managerBin, "manager-bin", "", "manager binary (default: go build ./operator/cmd/manager)")
	flag.StringVar(&c.workDir, "work-dir", "", "where kubeconfigs and manager logs go (default: a new temporary directory, kept)")
	flag.Uint64Var(&c.seed, "seed", c.seed, "seed of the workload and the kill times")
	flag.IntVar(&c.replicas, "replicas", c.replicas, "manager replicas; more than one run with leader election and the kills hit the leader")
	flag.Float64Var(&c.partitionShare, "partitions", c.partitionShare, "with -replicas > 1: share of the leader faults that partition the leader from the KCP instead of killing it")
	flag.DurationVar(&c.partitionFor, "partition-for", c.partitionFor, "with -replicas > 1: how long a partition lasts (longer than the lease duration + renew deadline, 25s)")
	flag.Parse()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	ctx, stop, err := harness.Prepare("kim-chaos-", &c.workDir, &c.managerBin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	r, err := run(ctx, c)
	stop()
	if r != nil {
		r.print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	if len(r.violations) > 0 || r.kills < c.expectKillsAtLeast {
		os.Exit(1)
	}
}

func (c config) validate() error {
	switch {
	case c.runtimes < 1 || c.runtimes > 5000:
		return fmt.Errorf("-runtimes %d: 1..5000", c.runtimes)
	case c.faultShare < 0 || c.faultShare > 1:
		return fmt.Errorf("-faults %g: 0..1", c.faultShare)
	case c.killMin <= 0 || c.killMax < c.killMin:
		return fmt.Errorf("-kill-min %s, -kill-max %s: 0 < min <= max", c.killMin, c.killMax)
	case c.grace < 10*time.Second:
		return fmt.Errorf("-grace %s: at least 10s (the window check tolerates a second)", c.grace)
	case c.replicas < 1 || c.replicas > 3:
		return fmt.Errorf("-replicas %d: 1..3", c.replicas)
	case c.partitionShare < 0 || c.partitionShare > 1:
		return fmt.Errorf("-partitions %g: 0..1", c.partitionShare)
	case c.replicas > 1 && c.partitionFor < shippedLease.Duration+shippedLease.RenewDeadline:
		return fmt.Errorf("-partition-for %s: at least the lease duration + renew deadline (%s), or the leader may outlive it", c.partitionFor, shippedLease.Duration+shippedLease.RenewDeadline)
	case c.replicas > 1 && c.killMin < shippedLease.Duration:
		return fmt.Errorf("-kill-min %s: with replicas at least the lease duration (%s)", c.killMin, shippedLease.Duration)
	}
	return nil
}

// managerArgs are the manager's flags besides the kubeconfigs and the metrics address.
func (c config) managerArgs(cfgPath string) []string {
	return []string{"--config=" + cfgPath, "--watch-namespaces=kcp-system", "--zap-time-encoding=rfc3339nano",
		fmt.Sprintf("--gardener-qps=%g", c.gardenerQPS), fmt.Sprintf("--gardener-burst=%d", c.gardenerBurst),
		fmt.Sprintf("--gardener-health-interval=%s", c.healthInterval),
		fmt.Sprintf("--runtime-workers=%d", c.runtimeWorkers), fmt.Sprintf("--gardener-cluster-workers=%d", c.clusterWorkers)}
}
