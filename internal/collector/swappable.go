// Package collector holds what the operator's Prometheus collectors share.
package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Swappable is a collector registered once per process with controller-runtime's registry, whose source can be
// replaced: an operator started again in the same process (tests, the sandbox) points it at its own caches instead
// of failing to register the same metrics twice. Until Use is called it collects nothing.
type Swappable struct {
	// Describes names the metrics (a zero value of the real collector describes them).
	Describes prometheus.Collector

	mu         sync.Mutex
	current    prometheus.Collector
	registered bool
}

// Use makes c the source of the metrics, registering them once.
func (s *Swappable) Use(c prometheus.Collector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = c
	if !s.registered {
		s.registered = metrics.Registry.Register(s) == nil
	}
}

// OnlyGauges marks the collector as gauges only (for the metrics catalogue), as the collectors it swaps are.
func (s *Swappable) OnlyGauges() {}

// Describe implements prometheus.Collector.
func (s *Swappable) Describe(ch chan<- *prometheus.Desc) { s.Describes.Describe(ch) }

// Collect implements prometheus.Collector.
func (s *Swappable) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	c := s.current
	s.mu.Unlock()
	if c != nil {
		c.Collect(ch)
	}
}
