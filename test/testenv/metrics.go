package testenv

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/component-base/metrics/legacyregistry"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconciles is how many reconciles controller-runtime counted for the named controller ("": every controller) in
// this process, whatever their result (controller_runtime_reconcile_total).
func Reconciles(controller string) (float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("gather metrics: %w", err)
	}
	n := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && (controller == "" || l.GetValue() == controller) {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n, nil
}

// WaitReconciled waits until the named controller has reconciled at least atLeast times in this process: the
// proof that a restarted operator looked at every object, instead of a sleep that hopes it did.
func WaitReconciled(t testing.TB, controller string, atLeast float64, timeout time.Duration) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := Reconciles(controller)
		assert.NoError(c, err)
		assert.GreaterOrEqual(c, n, atLeast, "reconciles of %s", controller)
	}, timeout, 50*time.Millisecond, "controller %s reconciled at least %v times", controller, atLeast)
}

// busyness is, per controller, how much work it has: items in its queue plus reconciles running. client-go has one
// work-queue metrics provider per process, and the first to claim it wins: in the manager that is controller-runtime
// (its registry, label "controller"), in a test process that links the in-process gardener-apiserver it is
// component-base (the legacy registry, label "name", which controller-runtime sets to the controller's name). Both
// are read, or the queue depth of a test process would always read 0 and only running reconciles would count.
func busyness() (map[string]float64, error) {
	out := map[string]float64{}
	for _, g := range []prometheus.Gatherer{ctrlmetrics.Registry, legacyregistry.DefaultGatherer} {
		families, err := g.Gather()
		if err != nil {
			return nil, fmt.Errorf("gather metrics: %w", err)
		}
		for _, f := range families {
			if f.GetName() != "workqueue_depth" && f.GetName() != "controller_runtime_active_workers" {
				continue
			}
			for _, m := range f.GetMetric() {
				if name := controllerLabel(m.GetLabel()); name != "" {
					out[name] += m.GetGauge().GetValue()
				}
			}
		}
	}
	return out, nil
}

// controllerLabel is the controller a work-queue or worker gauge belongs to: its "controller" label, else its
// "name" label (component-base's work-queue metrics have only that one).
func controllerLabel(labels []*dto.LabelPair) string {
	name := ""
	for _, l := range labels {
		switch l.GetName() {
		case "controller":
			return l.GetValue()
		case "name":
			name = l.GetValue()
		}
	}
	return name
}

// WaitIdle waits until the named controller of this operator has an empty queue and no reconcile running, five
// looks in a row 100 ms apart: events caused by what the test waited for (the operator's own writes) are then
// handled. The gauges are shared by every operator the process started; what an earlier, stopped one left in them
// is subtracted.
func (o *Operator) WaitIdle(t testing.TB, controller string, timeout time.Duration) {
	t.Helper()
	quiet := 0
	require.Eventually(t, func() bool {
		now, err := busyness()
		if err != nil || now[controller]-o.residue[controller] > 0 {
			quiet = 0
			return false
		}
		quiet++
		return quiet >= 5
	}, timeout, 100*time.Millisecond, "controller %s idle", controller)
}

// GardenerRequests sums the operator's Gardener request counters in this process: the total and by
// "verb/outcome" (admin kubeconfig requests as "adminkubeconfig/outcome").
func GardenerRequests(t testing.TB) (float64, map[string]float64) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total, byVerb := 0.0, map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kim_gardener_requests_total" && f.GetName() != "kim_gardener_kubeconfig_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			key := "adminkubeconfig"
			for _, l := range m.GetLabel() {
				if l.GetName() == "verb" {
					key = l.GetValue()
				}
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					key += "/" + l.GetValue()
				}
			}
			total += m.GetCounter().GetValue()
			byVerb[key] += m.GetCounter().GetValue()
		}
	}
	return total, byVerb
}
