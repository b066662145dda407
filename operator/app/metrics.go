package app

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/operator/controllers/skeleton"
	"github.com/kyma-project/kim/operator/legacymetrics"
)

// NewGardenerRequests returns kim_gardener_requests_total registered with reg (nil: controller-runtime's
// registry): every request of the shoot adapter to Gardener, by verb and outcome.
func NewGardenerRequests(reg prometheus.Registerer) *prometheus.CounterVec {
	return skeleton.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_gardener_requests_total",
		Help: "Requests to the Gardener API by verb and outcome."}, []string{"verb", "outcome"}))
}

// countGardenerRequest returns the shoot adapter's observer that counts into c.
func countGardenerRequest(c *prometheus.CounterVec) func(verb string, err error) {
	return func(verb string, err error) {
		outcome := "success"
		if err != nil {
			outcome = "error"
		}
		c.WithLabelValues(verb, outcome).Inc()
	}
}

// Modes of Options.LegacyMetrics (legacymetrics.ModeLow and ModeFull).
const (
	LegacyMetricsLow  = legacymetrics.ModeLow
	LegacyMetricsFull = legacymetrics.ModeFull
)

// addLegacyMetrics serves the previous infrastructure manager's metrics when opts asks for them.
func addLegacyMetrics(mgr manager.Manager, opts Options) error {
	if opts.LegacyMetrics == "" {
		return nil
	}
	return legacymetrics.Register(mgr, opts.LegacyMetrics, opts.KubeconfigValidity, opts.KubeconfigRotationFraction)
}
