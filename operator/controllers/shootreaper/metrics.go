package shootreaper

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Metrics of the shoot reaper that change with its events. The fleet gauges (pending, stuck, orphaned shoots, the
// guard) are computed when scraped (FleetCollector), so no event pays for a walk over the fleet.
type Metrics struct {
	deletionsExecuted prometheus.Counter
	// deletionEvents is shared with the Runtime controller, which emits the other events of safe deletion.
	deletionEvents skeleton.DeletionEvents
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry); a second
// call with the same registry returns the collectors registered first.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return &Metrics{
		deletionsExecuted: skeleton.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "kim_deletions_executed_total",
			Help: "Shoots deleted by the reaper."})),
		deletionEvents: skeleton.NewDeletionEvents(reg),
	}
}

// count records a use case event that a counter follows.
func (m *Metrics) count(reason string) {
	if reason == usecase.EventShootDeleted {
		m.deletionsExecuted.Inc()
	}
	m.deletionEvents.Count(reason)
}
