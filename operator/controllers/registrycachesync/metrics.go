package registrycachesync

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/usecase"
)

// Metrics of the registry cache sync. Labels are outcomes and operations only (bounded).
type Metrics struct {
	syncs   *prometheus.CounterVec
	secrets *prometheus.CounterVec
	refused prometheus.Counter
	watcher *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry). A second
// operator in one process shares the first one's collectors.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = metrics.Registry
	}
	m := &Metrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_registry_cache_syncs_total",
			Help: "Registry cache syncs of runtimes by outcome: synced, module_disabled, not_provisioned, runtime_gone, conflict, unreachable, over_limit, error."},
			[]string{"outcome"}),
		secrets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_registry_cache_garden_secrets_total",
			Help: "Copies of registry credentials in the Gardener project, by operation (created, deleted)."}, []string{"operation"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "kim_registry_cache_configs_refused_total",
			Help: "RegistryCacheConfig objects found invalid by syncs (counted per sync)."}),
		watcher: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_registry_cache_watcher_events_total",
			Help: "Runtime Watcher events at the registry cache listener by outcome: queued, coalesced (folded into a sync queued already), unknown_runtime, unauthenticated, too_large, bad_request, method_not_allowed, rate_limited, unavailable."},
			[]string{"outcome"}),
	}
	m.syncs = register(reg, m.syncs)
	m.watcher = register(reg, m.watcher)
	m.secrets = register(reg, m.secrets)
	m.refused = register(reg, m.refused)
	return m
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}

// Observe records one sync.
func (m *Metrics) Observe(res usecase.RegistryCacheResult) {
	if res.Outcome == "" {
		return
	}
	m.syncs.WithLabelValues(res.Outcome).Inc()
	m.secrets.WithLabelValues("created").Add(float64(res.SecretsCreated))
	m.secrets.WithLabelValues("deleted").Add(float64(res.SecretsDeleted))
	m.refused.Add(float64(res.Refused))
}

// ObserveWatcherEvent records one request to the watcher listener.
func (m *Metrics) ObserveWatcherEvent(outcome string) {
	if m != nil {
		m.watcher.WithLabelValues(outcome).Inc()
	}
}

// eventRecorder records a use case event on a Runtime.
