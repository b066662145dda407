package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

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
	harness.PoolGardenerKeys(4)
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
	cfgPath, proxy, err := writeFiles(ctx, c, w.Env)
	if err != nil {
		return r, err
	}
	defer func() { _ = proxy.Close() }()
	wl, err := newWorkload(w.Env, c.runtimes, c.grace, c.seed)
	if err != nil {
		return r, err
	}
	ch := &chaos{c: c, args: c.managerArgs(cfgPath), rnd: rand.New(rand.NewPCG(c.seed, 1))}
	health := &healthWatch{faultsOn: proxy.Enabled}
	ch.onStart = health.set
	// Faults from the first request on: the manager must start through them, and its first watches get dropped.
	proxy.Enable(true)
	chaosStart := time.Now()
	if err := ch.start(ctx); err != nil {
		return r, err
	}
	defer ch.stop()
	reader := &secretReader{c: w.Env.KCPClient}
	obsCtx, stopObservers := context.WithCancel(ctx)
	defer stopObservers()
	var observers sync.WaitGroup
	observers.Go(func() { reader.run(obsCtx, c.readInterval) })
	observers.Go(func() { health.run(obsCtx, time.Second) })

	harness.Logf("faults on (%.0f%%), manager started; creating %d Runtimes", 100*c.faultShare, c.runtimes)
	if err := wl.createAll(ctx); err != nil {
		return r, err
	}
	phase, endPhase := context.WithDeadline(ctx, chaosStart.Add(c.duration))
	var actors sync.WaitGroup
	actors.Go(func() { wl.run(phase, c.opInterval) })
	actors.Go(func() { ch.killLoop(phase) })
	actors.Wait()
	endPhase()
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if ch.err != nil {
		return r, ch.err
	}
	proxy.Enable(false)
	faultsOff := time.Now()
	faultStats := proxy.Stats()
	r.chaos = faultsOff.Sub(chaosStart)
	r.loadChaos = harness.LoadAvg()
	harness.Logf("faults off after %s, %d kills; waiting for convergence", r.chaos.Round(time.Second), ch.kills)

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
	stopObservers()
	observers.Wait()

	world, err := readWorld(ctx, w.Env)
	if err != nil {
		return r, err
	}
	world.History, r.ops = wl.snapshot()
	r.reads, world.BadReads = reader.result()
	all := proxy.Stats()
	world.PerSecond, world.Starts = all.PerSecond, ch.startSeconds()
	world.Limits = limits{QPS: c.gardenerQPS, Burst: c.gardenerBurst, HealthInterval: c.healthInterval}
	world.Grace = c.grace
	world.FaultsInjected = faultStats.TotalFaults()
	world.HealthErrorSeen = health.sawError()
	world.HealthyAtEnd = health.status(ctx) == "healthy"
	r.violations = check(world)
	if converged != nil {
		r.violations = append(r.violations, violation{"convergence", converged.Error()})
	}
	r.faults, r.requests, r.kills, r.restarts, r.watches = faultStats.Faults, all.Requests(), ch.kills, ch.starts, faultStats.Watches
	r.deletionsChecked = len(world.Deletions)
	r.qpsRatio, _, _, _, _ = qpsWorst(world)
	r.live = len(world.Runtimes)
	r.loadEnd = harness.LoadAvg()
	return r, nil
}

// writeFiles writes the kubeconfigs and the operator configuration (one short window for every plan, a breaker the
// run cannot trip) into the work directory, and starts the fault proxy. The manager runs with the shipped RBAC
// (harness.WriteKubeconfigs); its garden kubeconfig is replaced by one for the proxy, which forwards with the
// manager's own garden identity, so faults and permissions both stay real.
func writeFiles(ctx context.Context, c config, env *gardenbox.Env) (string, *faultproxy.Proxy, error) {
	scope := testenv.Scope{Namespaces: []string{keb.Namespace}, GardenNamespace: env.Catalogue.ProjectNamespace()}
	if err := harness.WriteKubeconfigs(ctx, env, c.workDir, scope); err != nil {
		return "", nil, err
	}
	gardenPath := filepath.Join(c.workDir, harness.ManagerGardenKubeconfigFile)
	raw, err := os.ReadFile(gardenPath)
	if err != nil {
		return "", nil, err
	}
	identity, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", gardenPath, err)
	}
	proxy, err := faultproxy.New(identity, faultproxy.Options{Share: c.faultShare, HoldMax: c.holdMax, WatchDropMax: c.watchDropMax})
	if err != nil {
		return "", nil, err
	}
	kc, err := gardenbox.Kubeconfig(proxy.ClientConfig(), "garden-through-fault-proxy")
	if err == nil {
		err = os.WriteFile(gardenPath, kc, 0o600)
	}
	if err != nil {
		_ = proxy.Close()
		return "", nil, fmt.Errorf("write the manager's garden kubeconfig: %w", err)
	}
	cfgPath, err := harness.WriteOperatorConfigDeletion(c.workDir, env.Catalogue.Project, map[string]any{
		"defaultGracePeriod": c.grace.String(),
		"budget":             map[string]any{"limit": 100000, "period": "1h"},
	})
	if err != nil {
		_ = proxy.Close()
		return "", nil, err
	}
	return cfgPath, proxy, nil
}

// chaos owns the manager process: it starts it, kills it at random moments and starts it again.
type chaos struct {
	c       config
	args    []string
	rnd     *rand.Rand
	onStart func(*harness.Manager)

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
	m, err := harness.StartManager(ctx, ch.c.managerBin, ch.c.workDir, filepath.Join(ch.c.workDir, fmt.Sprintf("manager-%d.log", n)), "runtime", ch.args)
	if err != nil {
		return err
	}
	ch.mu.Lock()
	ch.m, ch.starts = m, n
	ch.mu.Unlock()
	ch.onStart(m)
	return nil
}

// killLoop kills the manager after a random time between kill-min and kill-max and starts it again, until ctx
// ends or the kills are done.
func (ch *chaos) killLoop(ctx context.Context) {
	for ch.c.kills == 0 || ch.kills < ch.c.kills {
		wait := ch.c.killMin + time.Duration(ch.rnd.Int64N(int64(ch.c.killMax-ch.c.killMin)+1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
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
