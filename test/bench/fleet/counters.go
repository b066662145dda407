package main

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
)

// controllerNames are the controllers the manager runs (their reconcile and workqueue metrics).
var controllerNames = []string{"runtime", "shoot-reaper", "gardenercluster"}

// backgroundControllers work on timers of their own (the registry cache sync reads every runtime once an hour, its
// first sync spread over registryCacheStartSpread): counted and reported, but not part of the idle check, which
// they would keep from ever holding for the quiet time.
var backgroundControllers = []string{"registry-cache"}

// registryCacheStartSpread is how long after a Runtime appears its first registry cache sync may come (the
// controller's maxStartSpread): until then the sync is a wave of TLS handshakes with the runtimes that no shoot
// event caused, and would be counted as the events' CPU.
const registryCacheStartSpread = 10 * time.Minute

// counters are the manager's own metrics the harness reports.
type counters struct {
	// garden and kcp count the requests of the manager's HTTP clients by method (client-go's
	// rest_client_requests_total): garden is every Gardener request, the kubeconfig issuer's included.
	garden, kcp map[string]float64
	// reconciles and errors per controller; depth and active summed over the controllers' queues.
	reconciles, errors map[string]float64
	// background are the reconciles of backgroundControllers.
	background    map[string]float64
	depth, active float64
	// heapInuse is the Go heap in use (go_memstats_heap_inuse_bytes): the live objects and what the garbage
	// collector has not returned yet, without the headroom GOGC leaves (what GOMEMLIMIT bounds in production).
	heapInuse float64
}

func readCounters(ctx context.Context, m *harness.Manager, w *fleetWorld) (counters, error) {
	s, err := m.Scrape(ctx)
	if err != nil {
		return counters{}, err
	}
	c := counters{
		garden:     s.ByLabel("rest_client_requests_total", "method", `host="`+w.GardenHost+`"`),
		kcp:        s.ByLabel("rest_client_requests_total", "method", `host="`+w.KCPHost+`"`),
		reconciles: map[string]float64{}, errors: map[string]float64{}, background: map[string]float64{},
		heapInuse: s.Sum("go_memstats_heap_inuse_bytes"),
	}
	for _, ctl := range backgroundControllers {
		c.background[ctl] = s.Sum("controller_runtime_reconcile_total", `controller="`+ctl+`"`)
	}
	for _, ctl := range controllerNames {
		c.reconciles[ctl] = s.Sum("controller_runtime_reconcile_total", `controller="`+ctl+`"`)
		c.errors[ctl] = s.Sum("controller_runtime_reconcile_errors_total", `controller="`+ctl+`"`)
		c.depth += s.Sum("workqueue_depth", `name="`+ctl+`"`)
		c.active += s.Sum("controller_runtime_active_workers", `controller="`+ctl+`"`)
	}
	return c, nil
}

func total(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// gardenWrites are the requests that change something in the garden (POST includes admin kubeconfig requests).
func (c counters) gardenWrites() float64 {
	return c.garden["POST"] + c.garden["PUT"] + c.garden["PATCH"] + c.garden["DELETE"]
}

// minus is c - o, series by series.
func (c counters) minus(o counters) counters {
	sub := func(a, b map[string]float64) map[string]float64 {
		out := maps.Clone(a)
		for k, v := range b {
			out[k] -= v
		}
		maps.DeleteFunc(out, func(_ string, v float64) bool { return v == 0 })
		return out
	}
	return counters{garden: sub(c.garden, o.garden), kcp: sub(c.kcp, o.kcp), reconciles: sub(c.reconciles, o.reconciles),
		errors: sub(c.errors, o.errors), background: sub(c.background, o.background), depth: c.depth, active: c.active}
}

// waitIdle polls the manager until its controllers have done at least minReconciles reconciles together, their
// queues are empty, no worker is busy and neither reconciles nor Gardener requests changed for quiet. It returns
// the counters and when the last change was seen.
func waitIdle(ctx context.Context, m *harness.Manager, w *fleetWorld, minReconciles int, quiet, timeout time.Duration) (counters, time.Time, error) {
	return waitIdleFirst(ctx, m, w, minReconciles, quiet, timeout, nil)
}

// waitIdleFirst is waitIdle that also sets *first (when not nil) to when the first reconcile was seen: after a
// start, the end of the caches' lists, which is the API servers' part of the time to idle.
func waitIdleFirst(ctx context.Context, m *harness.Manager, w *fleetWorld, minReconciles int, quiet, timeout time.Duration, first *time.Time) (counters, time.Time, error) {
	read := func(ctx context.Context) (counters, error) { return readCounters(ctx, m, w) }
	return harness.WaitIdle(ctx, read, func(c counters) harness.Activity {
		if first != nil && first.IsZero() && total(c.reconciles) > 0 {
			*first = time.Now()
		}
		return harness.Activity{Work: total(c.reconciles) + total(c.garden), Busy: c.depth != 0 || c.active != 0,
			Enough:      total(c.reconciles) >= float64(minReconciles),
			Description: fmt.Sprintf("reconciles %v, queues %.0f, busy workers %.0f", c.reconciles, c.depth, c.active)}
	}, quiet, timeout)
}
