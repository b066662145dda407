package shootreaper

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/collector"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// FleetCollector computes the fleet gauges of safe deletion when Prometheus scrapes, from the caches: one walk
// over the managed shoots per scrape instead of one per shoot event.
type FleetCollector struct {
	Fleet *usecase.Fleet
	// KCP lists the Runtimes (cached): a managed shoot without one and without a deletion record is an orphan.
	KCP   client.Reader
	Clock ports.Clock
	// Reuse serves the gauges of a walk younger than this instead of walking again (0: every scrape walks). At
	// fleet size a walk decodes every cached shoot and Runtime; scrapers closer together than the gauges can
	// usefully change (the harness's idleness probe, several Prometheus replicas) would otherwise keep the
	// collector busy and the heap churning.
	Reuse time.Duration

	mu     sync.Mutex
	walked time.Time
	last   []prometheus.Metric
}

var (
	descPending  = prometheus.NewDesc("kim_shoots_pending_deletion", "Shoots hibernated and waiting for their deletion window.", nil, nil)
	descStuck    = prometheus.NewDesc("kim_deletions_stuck", "Shoot deletions Gardener reports errors for that allow force-deletion.", nil, nil)
	descOrphaned = prometheus.NewDesc("kim_shoots_orphaned",
		"Managed shoots without a Runtime and without a deletion record (nothing would ever delete them).", nil, nil)
	descInvalid = prometheus.NewDesc("kim_deletion_records_invalid",
		"Shoots whose deletion record is not trustworthy (kept until a person fixes the record).", nil, nil)
	descBrake   = prometheus.NewDesc("kim_deletion_brake", "1 while the emergency brake stops all shoot deletions.", nil, nil)
	descTripped = prometheus.NewDesc("kim_deletion_breaker_tripped",
		"1 while the deletion circuit breaker is tripped (a person must reset it).", nil, nil)
	descUsed  = prometheus.NewDesc("kim_deletion_budget_used", "Shoot deletions within the circuit breaker's period.", nil, nil)
	descLimit = prometheus.NewDesc("kim_deletion_budget_limit", "Shoot deletions the circuit breaker allows within its period.", nil, nil)
)

// GaugesOnly marks a collector all of whose metrics are gauges (for the metrics catalogue of the docs checks).
type GaugesOnly interface {
	prometheus.Collector
	OnlyGauges()
}

// OnlyGauges implements GaugesOnly.
func (c *FleetCollector) OnlyGauges() {}

// Describe implements prometheus.Collector.
func (c *FleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPending, descStuck, descOrphaned, descInvalid, descBrake, descTripped, descUsed, descLimit} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A cache that cannot be read (not started yet) yields no sample rather
// than a wrong zero.
func (c *FleetCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Clock.Now()
	if c.last == nil || c.Reuse <= 0 || now.Sub(c.walked) >= c.Reuse || now.Before(c.walked) {
		c.last, c.walked = c.walk(now), now
	}
	for _, m := range c.last {
		ch <- m
	}
}

// walk computes the gauges from the caches; what cannot be read is left out.
func (c *FleetCollector) walk(now time.Time) []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := []prometheus.Metric{}
	if g, err := c.Fleet.GuardState(ctx, now); err == nil {
		out = append(out, gauge(descBrake, g.Brake), gauge(descTripped, g.Tripped),
			prometheus.MustNewConstMetric(descUsed, prometheus.GaugeValue, float64(g.Used)),
			prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(g.Limit)))
	}
	var runtimes imv1.RuntimeList
	if err := c.KCP.List(ctx, &runtimes, client.UnsafeDisableDeepCopy); err != nil {
		return out
	}
	live := make(map[string]bool, len(runtimes.Items))
	for i := range runtimes.Items {
		live[runtimes.Items[i].Name] = true
	}
	r, err := c.Fleet.ShootCounts(ctx, live, now)
	if err != nil {
		return out
	}
	for d, v := range map[*prometheus.Desc]int{descPending: r.Pending, descStuck: r.Stuck, descOrphaned: r.Orphaned, descInvalid: r.Invalid} {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v)))
	}
	return out
}

func gauge(d *prometheus.Desc, on bool) prometheus.Metric {
	v := 0.0
	if on {
		v = 1
	}
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
}

// fleetGauges is the one registration of the fleet gauges in the process.
var fleetGauges = &collector.Swappable{Describes: &FleetCollector{}}
