package kymaruntime

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Metrics of the Runtime lifecycle and of its part of safe deletion (marks, restores) that change with events.
// Labels stay low-cardinality (provider, state, verb, reason). The shoot reaper's metrics and the fleet gauges are
// its package's (shootreaper).
type Metrics struct {
	runtimes             *prometheus.GaugeVec
	provisioningDuration prometheus.Histogram
	updateDuration       prometheus.Histogram
	recoveries           prometheus.Counter
	// deletionEvents is shared with the shoot reaper, which emits the other events of safe deletion.
	deletionEvents   skeleton.DeletionEvents
	bootstrapRefused *prometheus.CounterVec
	progressHeld     prometheus.Counter
	rollout          rolloutGauges

	mu    sync.Mutex
	known map[string][2]string // runtime -> provider, state
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry); a second
// call with the same registry returns the collectors registered first.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	buckets := []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600}
	m := &Metrics{
		runtimes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kim_runtimes", Help: "Runtimes by provider and state."},
			[]string{"provider", "state"}),
		provisioningDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kim_runtime_provisioning_duration_seconds",
			Help: "Time from Runtime creation to its first Ready.", Buckets: buckets}),
		updateDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kim_runtime_update_duration_seconds",
			Help: "Time from leaving Ready (spec change, drift) to Ready again.", Buckets: buckets}),
		recoveries:     prometheus.NewCounter(prometheus.CounterOpts{Name: "kim_recoveries_total", Help: "Clusters restored from pending deletion."}),
		deletionEvents: skeleton.NewDeletionEvents(reg),
		bootstrapRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_bootstrap_refused_total",
			Help: "Configuration attempts that refused the bootstrap set (nothing applied), by reason."}, []string{"reason"}),
		progressHeld: prometheus.NewCounter(prometheus.CounterOpts{Name: "kim_runtime_status_progress_held_total",
			Help: "Runtime status writes left out because only Gardener's progress changed within runtime.statusProgressInterval."}),
		rollout: newRolloutGauges(),
		known:   map[string][2]string{},
	}
	// A second operator in one process (tests restart it) shares the first one's collectors.
	m.runtimes = skeleton.Register(reg, m.runtimes)
	m.provisioningDuration = skeleton.Register(reg, m.provisioningDuration)
	m.updateDuration = skeleton.Register(reg, m.updateDuration)
	m.recoveries = skeleton.Register(reg, m.recoveries)
	m.bootstrapRefused = skeleton.Register(reg, m.bootstrapRefused)
	m.progressHeld = skeleton.Register(reg, m.progressHeld)
	m.rollout.wave = skeleton.Register(reg, m.rollout.wave)
	m.rollout.waves = skeleton.Register(reg, m.rollout.waves)
	m.rollout.stopped = skeleton.Register(reg, m.rollout.stopped)
	m.rollout.failed = skeleton.Register(reg, m.rollout.failed)
	return m
}

// count records a use case event that a counter follows.
func (m *Metrics) count(reason string) {
	switch reason {
	case usecase.EventClusterRestored:
		m.recoveries.Inc()
	case usecase.EventBootstrapPullSecretRefused, usecase.EventBootstrapObjectRefused:
		m.bootstrapRefused.WithLabelValues(reason).Inc()
	}
	m.deletionEvents.Count(reason)
}

// SetRuntime records the state of one runtime; an empty state forgets it.
func (m *Metrics) SetRuntime(key, provider, state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.known[key]; ok {
		m.runtimes.WithLabelValues(old[0], old[1]).Dec()
		delete(m.known, key)
	}
	if state != "" {
		m.known[key] = [2]string{provider, state}
		m.runtimes.WithLabelValues(provider, state).Inc()
	}
}
