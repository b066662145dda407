package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// FleetCollector computes the fleet gauges of safe deletion when Prometheus scrapes, from the caches: one walk
// over the managed shoots per scrape instead of one per shoot event.
type FleetCollector struct {
	Shoots ports.ShootLister
	KCP    client.Reader
	Guard  ports.DeletionGuard
	Policy deletion.Policy
	Clock  ports.Clock
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := c.Clock.Now()
	budget := c.Policy.Budget
	if budget == (deletion.Budget{}) {
		budget = deletion.DefaultBudget()
	}
	if st, err := c.Guard.Load(ctx, ports.ReadCached); err == nil {
		ch <- gauge(descBrake, st.Frozen || c.Policy.Frozen)
		ch <- gauge(descTripped, !st.Ledger.TrippedAt.IsZero())
		ch <- prometheus.MustNewConstMetric(descUsed, prometheus.GaugeValue, float64(budget.Used(st.Ledger, now)))
		ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(budget.Limit))
	}
	var runtimes imv1.RuntimeList
	if err := c.KCP.List(ctx, &runtimes, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	live := make(map[string]bool, len(runtimes.Items))
	for i := range runtimes.Items {
		live[runtimes.Items[i].Name] = true
	}
	shoots, err := c.Shoots.ListManaged(ctx)
	if err != nil {
		return
	}
	var pending, stuck, orphaned, invalid float64
	for _, s := range shoots {
		pd := s.Marks.PendingDeletion
		switch {
		case pd != nil:
			pending++
			if deletion.CheckRecord(*pd, c.Policy, now) != nil {
				invalid++
			}
			if deletion.Reap(deletion.ReapInput{Shoot: s}, c.Policy, now).Stuck {
				stuck++
			}
		case !s.Deleting() && !live[s.Marks.RuntimeID]:
			orphaned++
		}
	}
	for d, v := range map[*prometheus.Desc]float64{descPending: pending, descStuck: stuck, descOrphaned: orphaned, descInvalid: invalid} {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
}

func gauge(d *prometheus.Desc, on bool) prometheus.Metric {
	v := 0.0
	if on {
		v = 1
	}
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
}

// fleetGauges is the one registration of the fleet gauges in the process; an operator restarted in the same
// process (tests, the sandbox) points it at its own caches.
var fleetGauges = &swappableCollector{}

type swappableCollector struct {
	mu         sync.Mutex
	current    prometheus.Collector
	registered bool
}

// use makes c the source of the fleet gauges, registering them with controller-runtime's registry once.
func (s *swappableCollector) use(c prometheus.Collector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = c
	if !s.registered {
		s.registered = metrics.Registry.Register(s) == nil
	}
}

// Describe implements prometheus.Collector.
func (s *swappableCollector) Describe(ch chan<- *prometheus.Desc) { (&FleetCollector{}).Describe(ch) }

// Collect implements prometheus.Collector.
func (s *swappableCollector) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	c := s.current
	s.mu.Unlock()
	if c != nil {
		c.Collect(ch)
	}
}
