package auditlogpool

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/collector"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Metrics counts what the pool controller did.
type Metrics struct {
	events *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = metrics.Registry
	}
	m := &Metrics{events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kim_auditlog_events_total",
		Help: "Events of the audit log pool by reason: claimed, released, reservation recovered, read credentials copied or missing."},
		[]string{"reason"})}
	if err := reg.Register(m.events); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(*prometheus.CounterVec); ok {
				m.events = existing
			}
		}
	}
	return m
}

// Count records one event.
func (m *Metrics) Count(reason string) { m.events.WithLabelValues(reason).Inc() }

var (
	descTenants = prometheus.NewDesc("kim_auditlog_pool_tenants",
		"AuditLog resources of the pool by state: free, reserved, claimed, orphaned (released), unusable (not approved by the audit log manager, lacking a subaccount ID, service URL or write credentials Secret, or with a service URL or Secret name a shoot must not get).",
		[]string{"state"}, nil)
	descFree    = prometheus.NewDesc("kim_auditlog_pool_free", "AuditLog resources of the pool a runtime can claim.", nil, nil)
	descWaiting = prometheus.NewDesc("kim_auditlog_runtimes_waiting",
		"Runtimes waiting for a dedicated audit log tenant because the pool has no free one (Ready reason AuditLogPoolEmpty).", nil, nil)
)

// PoolCollector computes the pool gauges from the caches when Prometheus scrapes.
type PoolCollector struct {
	Pool     ports.AuditLogPool
	Runtimes client.Reader
}

// OnlyGauges marks the collector as gauges only (for the metrics catalogue).
func (c *PoolCollector) OnlyGauges() {}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descTenants
	ch <- descFree
	ch <- descWaiting
}

// Collect implements prometheus.Collector. A cache that cannot be read yields no sample rather than a wrong zero.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if tenants, err := c.Pool.List(ctx, ports.ReadCached); err == nil {
		s := auditlog.Count(tenants)
		for state, n := range map[string]int{"free": s.Free, "reserved": s.Reserved, "claimed": s.Claimed, "orphaned": s.Orphaned, "unusable": s.Unusable} {
			ch <- prometheus.MustNewConstMetric(descTenants, prometheus.GaugeValue, float64(n), state)
		}
		ch <- prometheus.MustNewConstMetric(descFree, prometheus.GaugeValue, float64(s.Free))
	}
	var runtimes imv1.RuntimeList
	if err := c.Runtimes.List(ctx, &runtimes, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	waiting := 0
	for i := range runtimes.Items {
		if cond := meta.FindStatusCondition(runtimes.Items[i].Status.Conditions, imv1.ConditionReady); cond != nil &&
			cond.Reason == string(lifecycle.ReasonAuditLogPoolEmpty) {
			waiting++
		}
	}
	ch <- prometheus.MustNewConstMetric(descWaiting, prometheus.GaugeValue, float64(waiting))
}

// poolGauges is the one registration of the pool gauges in the process.
var poolGauges = &collector.Swappable{Describes: &PoolCollector{}}
