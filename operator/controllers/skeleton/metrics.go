package skeleton

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/usecase"
)

// Register registers c with reg (nil: controller-runtime's registry) and returns it, or returns the collector
// already registered under its name: an operator started again in the same process (tests, the sandbox) shares
// the first one's collectors, so its metrics stay visible instead of going to unregistered twins. Every
// controller's metrics are created by a constructor that takes the registry (never in init()).
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		reg = metrics.Registry
	}
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}

// DeletionEvents counts the events of safe deletion by reason (kim_deletion_events_total). Two controllers emit
// them, the Runtime controller (marks, restores, credentials bindings) and the shoot reaper (deletions, the brake,
// the circuit breaker), into one counter: it is defined here once, so both register the same one.
type DeletionEvents struct {
	events *prometheus.CounterVec
}

// NewDeletionEvents creates the counter and registers it with reg (nil: controller-runtime's registry), or returns
// the one registered first.
func NewDeletionEvents(reg prometheus.Registerer) DeletionEvents {
	return DeletionEvents{events: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_deletion_events_total",
		Help: "Events of safe deletion by reason: marked, deleted, force-deleted, restored, stopped, breaker tripped, invalid record, record not backed by the KCP, invalid brake value."},
		[]string{"reason"}))}
}

// Count counts an event of a use case if it is one of safe deletion; other reasons are not counted.
func (d DeletionEvents) Count(reason string) {
	switch reason {
	case usecase.EventShootMarked, usecase.EventShootDeleted, usecase.EventShootForceDeleted, usecase.EventClusterRestored,
		usecase.EventRestoreStarted, usecase.EventDeletionStopped, usecase.EventBreakerTripped, usecase.EventInvalidDeletionRecord,
		usecase.EventRestoreDocumentDropped, usecase.EventNoKCPRecord, usecase.EventKCPRecordMismatch, usecase.EventBrakeInvalid,
		usecase.EventBindingReleased, usecase.EventBindingRestored, usecase.EventBindingNotReleased:
		d.events.WithLabelValues(reason).Inc()
	}
}
