package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// run is the whole chaos run; the report is returned also when the run failed part-way, as far as it got.
func run(ctx context.Context, c config) (*report, error) {
	r := &report{cfg: c, loadStart: harness.LoadAvg(), started: time.Now()}
	gardenbox.PoolGardenerKeys(4)
	harness.Logf("starting garden-in-a-box (work dir %s)", c.workDir)
	w, err := harness.StartWorld(ctx, testenv.GardenOptions{
		RuntimeAPIServers: runtimeapi.ModeShared,
		Gardenlet: gardenlet.Options{CreateDuration: c.createDuration, ReconcileDuration: time.Second, DeleteDuration: 2 * time.Second,
			ProgressInterval: time.Second, MaxConcurrentReconciles: 10},
	}, keb.Namespace)
	if err != nil {
		return r, err
	}
	defer func() { _ = w.Env.Stop() }()
	cfgPath, reps, err := writeFiles(ctx, c, w.Env)
	defer func() {
		for _, rp := range reps {
			for _, p := range []*faultproxy.Proxy{rp.garden, rp.kcp} {
				if p != nil {
					_ = p.Close()
				}
			}
		}
	}()
	if err != nil {
		return r, err
	}
	wl, err := newWorkload(w.Env, c.runtimes, c.grace, c.seed)
	if err != nil {
		return r, err
	}
	var (
		ch *chaos
		rs *replicaSet
	)
	health := &healthWatch{faultsOn: reps[0].garden.Enabled}
	if c.replicas == 1 {
		ch = &chaos{c: c, args: c.managerArgs(cfgPath), rnd: rand.New(rand.NewPCG(c.seed, 1)), dir: reps[0].dir}
		health.managers = ch.running
	} else {
		if rs, err = newReplicaSet(c, c.managerArgs(cfgPath), reps, w.Env); err != nil {
			return r, err
		}
		health.managers = rs.running
	}
	// Faults from the first request on: the manager must start through them, and its first watches get dropped.
	for _, rp := range reps {
		rp.garden.Enable(true)
	}
	chaosStart := time.Now()
	if ch != nil {
		err = ch.start(ctx)
		defer ch.stop()
	} else {
		err = rs.start(ctx)
		defer rs.stop()
	}
	if err != nil {
		return r, err
	}
	reader := &secretReader{c: w.Env.KCPClient}
	obsCtx, stopObservers := context.WithCancel(ctx)
	defer stopObservers()
	var observers sync.WaitGroup
	observers.Go(func() { reader.run(obsCtx, c.readInterval) })
	observers.Go(func() { health.run(obsCtx, time.Second) })

	harness.Logf("faults on (%.0f%%), %d manager replica(s) started; creating %d Runtimes", 100*c.faultShare, c.replicas, c.runtimes)
	created := make(chan struct{})
	phase, endPhase := context.WithDeadline(ctx, chaosStart.Add(c.duration))
	var actors sync.WaitGroup
	if rs != nil {
		// The first leader fault comes right after the creation, with every Runtime in flight.
		actors.Go(func() { rs.faultLoop(phase, created) })
	}
	if err := wl.createAll(ctx); err != nil {
		endPhase()
		actors.Wait()
		return r, err
	}
	close(created)
	actors.Go(func() { wl.run(phase, c.opInterval) })
	if ch != nil {
		// A number of kills asked for (the short tests) is waited for: on a loaded machine the creation above can
		// take most of the duration, and a phase that ends on the clock left a run with one kill of two. The faults
		// stay on until the kills are done, at most one kill interval each past the duration.
		killPhase, endKills := phase, context.CancelFunc(func() {})
		if c.kills > 0 {
			killPhase, endKills = context.WithDeadline(ctx, chaosStart.Add(c.duration+time.Duration(c.kills)*c.killMax))
		}
		actors.Go(func() { defer endKills(); ch.killLoop(killPhase) })
	}
	actors.Wait()
	endPhase()
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if ch != nil && ch.err != nil {
		return r, ch.err
	}
	if rs != nil {
		if err := rs.failure(); err != nil {
			return r, err
		}
	}
	for _, rp := range reps {
		rp.garden.Enable(false)
	}
	faultsOff := time.Now()
	faultStats := gardenStats(reps)
	r.chaos = faultsOff.Sub(chaosStart)
	r.loadChaos = harness.LoadAvg()
	if ch != nil {
		harness.Logf("faults off after %s, %d kills; waiting for convergence", r.chaos.Round(time.Second), ch.kills)
	} else {
		harness.Logf("faults off after %s, %d leader faults; waiting for convergence", r.chaos.Round(time.Second), rs.faultCount())
	}

	converged := testenv.Poll(ctx, c.convergeTimeout, 3*time.Second, "convergence", func() (bool, string) {
		world, err := readWorld(ctx, w.Env)
		if err != nil {
			return false, err.Error()
		}
		v := append(checkReady(world), checkShoots(world)...)
		if len(v) > 0 {
			return false, fmt.Sprintf("%d open: %s", len(v), v[0])
		}
		return health.status(ctx) == "healthy", "kim_gardener_health: " + health.status(ctx)
	}, harness.ProgressLog)
	r.converge = time.Since(faultsOff)
	// The shoots of Runtimes deleted late in the chaos phase are still inside their deletion windows when the rest
	// has converged (a shoot with a deletion record may stay), and a loaded machine makes Runtimes Ready, and so
	// deleted, later. Their deletions are what invWindow judges: wait for every one the run started instead of
	// counting on the chaos phase to leave time for them (a run of the short test checked none). A window may have
	// just begun: it adds to the bound.
	if converged == nil {
		converged = testenv.Poll(ctx, c.grace+c.convergeTimeout, time.Second, "the shoots of deleted Runtimes deleted after their windows", func() (bool, string) {
			world, err := readWorld(ctx, w.Env)
			if err != nil {
				return false, err.Error()
			}
			if pending := pendingDeletions(world); len(pending) > 0 {
				return false, fmt.Sprintf("%d pending, first %s", len(pending), pending[0])
			}
			return true, ""
		}, harness.ProgressLog)
		r.windows = time.Since(faultsOff) - r.converge
	}
	stopObservers()
	observers.Wait()
	if rs != nil {
		rs.stopObserving()
		if err := rs.failure(); err != nil {
			return r, err
		}
	}

	world, err := readWorld(ctx, w.Env)
	if err != nil {
		return r, err
	}
	world.History, r.ops = wl.snapshot()
	r.reads, world.BadReads = reader.result()
	all := gardenStats(reps)
	for _, rp := range reps {
		starts := rp.startSeconds()
		if ch != nil {
			starts = ch.startSeconds()
		}
		world.Rates = append(world.Rates, rates{Replica: rp.name, PerSecond: rp.garden.Stats().PerSecond, Starts: starts})
	}
	world.Limits = limits{QPS: c.gardenerQPS, Burst: c.gardenerBurst, HealthInterval: c.healthInterval}
	world.Grace = c.grace
	world.FaultsInjected = faultStats.TotalFaults()
	world.HealthErrorSeen = health.sawError()
	world.HealthyAtEnd = health.status(ctx) == "healthy"
	if rs != nil {
		rs.fill(&world)
		r.replicas = replicaReport(world, rs, reader)
	}
	r.violations = check(world)
	if converged != nil {
		r.violations = append(r.violations, violation{"convergence", converged.Error()})
	}
	r.faults, r.requests, r.watches = faultStats.Faults, all.Requests(), faultStats.Watches
	if ch != nil {
		r.kills, r.restarts = ch.kills, ch.starts
	} else {
		// -min-kills counts the leader faults.
		r.kills, r.restarts = len(world.Faults), r.replicas.starts
	}
	r.deletionsChecked = len(world.Deletions)
	r.qpsRatio = qpsWorstOf(world)
	r.live = len(world.Runtimes)
	r.loadEnd = harness.LoadAvg()
	return r, nil
}

// gardenStats adds up the garden proxies' counters.
func gardenStats(reps []*replica) faultproxy.Stats {
	out := faultproxy.Stats{PerSecond: map[int64]int{}, Faults: map[faultproxy.Kind]int{}}
	for _, rp := range reps {
		s := rp.garden.Stats()
		for k, v := range s.PerSecond {
			out.PerSecond[k] += v
		}
		for k, v := range s.Faults {
			out.Faults[k] += v
		}
		out.Forwarded += s.Forwarded
		out.Watches += s.Watches
	}
	return out
}

// writeFiles writes the kubeconfigs and the operator configuration (one short window for every plan, a breaker the
// run cannot trip) into the work directory, and starts the fault proxies. The manager runs with the shipped RBAC
// (harness.WriteKubeconfigs); its garden kubeconfig is replaced by one for its proxy, which forwards with the
// manager's own garden identity, so faults and permissions both stay real. With several replicas each gets a
// directory of its own with kubeconfigs for its own proxies in front of the garden and the KCP (the KCP proxy
// forwards with the manager's KCP identity and keeps an audit of the replica's writes, the Lease's bodies included).
func writeFiles(ctx context.Context, c config, env *gardenbox.Env) (string, []*replica, error) {
	scope := testenv.Scope{Namespaces: []string{keb.Namespace}, GardenNamespace: env.Catalogue.ProjectNamespace()}
	if err := harness.WriteKubeconfigs(ctx, env, c.workDir, scope); err != nil {
		return "", nil, err
	}
	gardenID, err := readIdentity(filepath.Join(c.workDir, harness.ManagerGardenKubeconfigFile))
	if err != nil {
		return "", nil, err
	}
	kcpID, err := readIdentity(filepath.Join(c.workDir, harness.ManagerKCPKubeconfigFile))
	if err != nil {
		return "", nil, err
	}
	var reps []*replica
	several := c.replicas > 1
	for i := range c.replicas {
		rp := &replica{name: string(rune('a' + i)), dir: c.workDir}
		reps = append(reps, rp)
		if several {
			rp.dir = filepath.Join(c.workDir, "replica-"+rp.name)
			if err := os.MkdirAll(rp.dir, 0o700); err != nil {
				return "", reps, err
			}
		}
		rp.garden, err = faultproxy.New(gardenID, faultproxy.Options{Share: c.faultShare, HoldMax: c.holdMax, WatchDropMax: c.watchDropMax, Audit: several})
		if err != nil {
			return "", reps, err
		}
		if err := writeKubeconfig(rp.garden, filepath.Join(rp.dir, harness.ManagerGardenKubeconfigFile), "garden-through-fault-proxy"); err != nil {
			return "", reps, err
		}
		if several {
			rp.kcp, err = faultproxy.New(kcpID, faultproxy.Options{Audit: true, KeepBody: isLeaseWrite})
			if err != nil {
				return "", reps, err
			}
			if err := writeKubeconfig(rp.kcp, filepath.Join(rp.dir, harness.ManagerKCPKubeconfigFile), "kcp-through-fault-proxy"); err != nil {
				return "", reps, err
			}
		}
	}
	cfgPath, err := harness.WriteOperatorConfigDeletion(c.workDir, env.Catalogue.Project, map[string]any{
		"defaultGracePeriod": c.grace.String(),
		"budget":             map[string]any{"limit": 100000, "period": "1h"},
	})
	return cfgPath, reps, err
}

// readIdentity reads a manager kubeconfig written by harness.WriteKubeconfigs.
func readIdentity(path string) (*rest.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// writeKubeconfig writes a kubeconfig for the proxy p to path.
func writeKubeconfig(p *faultproxy.Proxy, path, name string) error {
	kc, err := gardenbox.Kubeconfig(p.ClientConfig(), name)
	if err == nil {
		err = os.WriteFile(path, kc, 0o600)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// chaos owns the manager process: it starts it, kills it at random moments and starts it again.
type chaos struct {
	c    config
	args []string
	dir  string
	rnd  *rand.Rand

	mu     sync.Mutex
	m      *harness.Manager
	starts int
	kills  int
	begun  []int64
	err    error
}

func (ch *chaos) start(ctx context.Context) error {
	ch.mu.Lock()
	n := ch.starts + 1
	ch.begun = append(ch.begun, time.Now().Unix())
	ch.mu.Unlock()
	m, err := harness.StartManager(ctx, ch.c.managerBin, ch.dir, filepath.Join(ch.dir, fmt.Sprintf("manager-%d.log", n)), "runtime", ch.args)
	if err != nil {
		return err
	}
	ch.mu.Lock()
	ch.m, ch.starts = m, n
	ch.mu.Unlock()
	return nil
}

// running is the manager process, while it runs.
func (ch *chaos) running() []*harness.Manager {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.m == nil || ch.m.Exited() {
		return nil
	}
	return []*harness.Manager{ch.m}
}

// killLoop kills the manager after a random time between kill-min and kill-max and starts it again, until ctx
// ends or the kills are done.
func (ch *chaos) killLoop(ctx context.Context) {
	// The next kill is due kill-min to kill-max after the previous one (the first after the loop starts), whatever
	// the restart in between took: StartManager returns only once the controllers run, which under Gardener faults
	// can take most of the interval, and counting the interval from there left short runs with a single kill.
	due := time.Now()
	for ch.c.kills == 0 || ch.kills < ch.c.kills {
		due = due.Add(ch.c.killMin + time.Duration(ch.rnd.Int64N(int64(ch.c.killMax-ch.c.killMin)+1)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due)):
		}
		due = time.Now()
		ch.mu.Lock()
		m := ch.m
		ch.mu.Unlock()
		if m.Exited() {
			ch.err = fmt.Errorf("manager %d exited by itself (see its log in %s)", ch.starts, ch.c.workDir)
			return
		}
		m.Kill()
		ch.kills++
		harness.Logf("kill %d: manager pid %d SIGKILLed after %s", ch.kills, m.PID(), time.Since(m.Started()).Round(time.Second))
		// The next manager starts whatever ctx says: the world must converge with a manager running.
		if err := ch.start(context.WithoutCancel(ctx)); err != nil {
			ch.err = fmt.Errorf("restart after kill %d: %w", ch.kills, err)
			return
		}
	}
}

func (ch *chaos) startSeconds() []int64 {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return append([]int64(nil), ch.begun...)
}

func (ch *chaos) stop() {
	ch.mu.Lock()
	m := ch.m
	ch.mu.Unlock()
	if m != nil {
		m.Stop()
	}
}
