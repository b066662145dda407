package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
)

// counters are the manager's own metrics that the harness reports.
type counters struct {
	// gardenerRequests counts admin kubeconfig requests (kim_gardener_kubeconfig_requests_total, all outcomes).
	gardenerRequests, gardenerSuccess float64
	// gardenPosts counts POSTs the manager's HTTP clients sent to the garden (client-go's rest_client_requests_total):
	// an independent count of the adminkubeconfig requests, which are the only POSTs the controller sends there.
	gardenPosts, gardenRequests, kcpRequests float64
	// kcpByMethod splits kcpRequests by HTTP method.
	kcpByMethod                 map[string]float64
	reconciles, reconcileErrors float64
	depth, active               float64
}

func readCounters(ctx context.Context, m *harness.Manager, gardenHost, kcpHost string) (counters, error) {
	s, err := m.Scrape(ctx)
	if err != nil {
		return counters{}, err
	}
	const ctl = `controller="gardenercluster"`
	return counters{
		gardenerRequests: s.Sum("kim_gardener_kubeconfig_requests_total"),
		gardenerSuccess:  s.Sum("kim_gardener_kubeconfig_requests_total", `outcome="success"`),
		gardenPosts:      s.Sum("rest_client_requests_total", `host="`+gardenHost+`"`, `method="POST"`),
		gardenRequests:   s.Sum("rest_client_requests_total", `host="`+gardenHost+`"`),
		kcpRequests:      s.Sum("rest_client_requests_total", `host="`+kcpHost+`"`),
		reconciles:       s.Sum("controller_runtime_reconcile_total", ctl),
		reconcileErrors:  s.Sum("controller_runtime_reconcile_errors_total", ctl),
		depth:            s.Sum("workqueue_depth", `name="gardenercluster"`),
		active:           s.Sum("controller_runtime_active_workers", ctl),
		kcpByMethod:      s.ByLabel("rest_client_requests_total", "method", `host="`+kcpHost+`"`),
	}, nil
}

// waitIdle polls the manager until it has done at least minReconciles reconciles, its queue is empty, no worker is
// busy and nothing has changed for quiet. It returns the counters and when the last change was seen.
func waitIdle(ctx context.Context, m *harness.Manager, gardenHost, kcpHost string, minReconciles int, quiet, timeout time.Duration) (counters, time.Time, error) {
	read := func(ctx context.Context) (counters, error) { return readCounters(ctx, m, gardenHost, kcpHost) }
	return harness.WaitIdle(ctx, read, func(c counters) harness.Activity {
		return harness.Activity{Work: c.reconciles + c.gardenerRequests, Busy: c.depth != 0 || c.active != 0,
			Enough:      c.reconciles >= float64(minReconciles),
			Description: fmt.Sprintf("reconciles %.0f, queue %.0f, busy workers %.0f", c.reconciles, c.depth, c.active)}
	}, quiet, timeout)
}
