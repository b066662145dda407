package skeleton

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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
