package kymaruntime

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// rolloutTracker follows the rollout of the bootstrap manifests in waves: every interval it derives the rollout
// from the caches (usecase.BootstrapRollout.Refresh), reports it as gauges and puts the Runtimes a wave that
// advanced admits on the controller's queue. Held Runtimes are not polled: nothing reconciles them until their
// wave comes (or something else about them changes).
type rolloutTracker struct {
	rollout  *usecase.BootstrapRollout
	clock    ports.Clock
	metrics  *Metrics
	interval time.Duration
	events   chan<- event.TypedGenericEvent[reconcile.Request]
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader reconciles, so only it enqueues.
func (t *rolloutTracker) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable. The manager starts it after its caches synced.
func (t *rolloutTracker) Start(ctx context.Context) error {
	tick := time.NewTicker(t.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			t.refresh(ctx)
		}
	}
}

func (t *rolloutTracker) refresh(ctx context.Context) {
	res, err := t.rollout.Refresh(ctx, t.clock.Now())
	if err != nil {
		ctrl.LoggerFrom(ctx).WithName("bootstrap-rollout").Error(err, "cannot follow the rollout of the bootstrap manifests; trying again",
			"after", t.interval.String())
		return
	}
	t.metrics.setRollout(res.Plan)
	if len(res.Enqueue) > 0 {
		ctrl.LoggerFrom(ctx).WithName("bootstrap-rollout").Info("bootstrap manifests rollout", "set", res.Plan.Hash,
			"wave", res.Plan.Wave, "waves", res.Plan.Waves, "stopped", res.Plan.Stopped, "tried", res.Plan.Tried,
			"failed", res.Plan.Failed, "enqueued", len(res.Enqueue))
	}
	for _, k := range res.Enqueue {
		select {
		case t.events <- event.TypedGenericEvent[reconcile.Request]{Object: reconcile.Request{NamespacedName: types.NamespacedName{
			Namespace: k.Namespace, Name: k.Name}}}:
		case <-ctx.Done():
			return
		}
	}
}

// requestEvents enqueues the request a generic event carries.
func requestEvents() handler.TypedEventHandler[reconcile.Request, reconcile.Request] {
	return handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q queue) { q.Add(e.Object) },
	}
}

// rolloutGauges are the gauges of the rollout of the bootstrap manifests.
type rolloutGauges struct {
	wave, waves, stopped, failed prometheus.Gauge
}

func newRolloutGauges() rolloutGauges {
	return rolloutGauges{
		wave: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kim_bootstrap_rollout_wave",
			Help: "The highest wave of the rollout of the bootstrap manifests admitted (of kim_bootstrap_rollout_waves)."}),
		waves: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kim_bootstrap_rollout_waves",
			Help: "The number of waves the rollout of the bootstrap manifests has (1: all at once)."}),
		stopped: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kim_bootstrap_rollout_stopped",
			Help: "1 while the rollout of the bootstrap manifests is stopped: more runtimes failed them than runtime.bootstrap.rollout.maxFailures tolerates."}),
		failed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kim_bootstrap_rollout_failed",
			Help: "Runtimes whose last attempt of the current bootstrap manifests failed."}),
	}
}

// setRollout reports the rollout derived last.
func (m *Metrics) setRollout(r runtimeconfig.Rollout) {
	m.rollout.wave.Set(float64(r.Wave))
	m.rollout.waves.Set(float64(r.Waves))
	m.rollout.failed.Set(float64(r.Failed))
	stopped := 0.0
	if r.Stopped {
		stopped = 1
	}
	m.rollout.stopped.Set(stopped)
}
