// Package legacymetrics exports the metrics of the previous infrastructure manager under their names and labels,
// so that its dashboards and alerts keep working after the switch (manager flag --legacy-metrics). The values are
// computed from the operator's caches when Prometheus scrapes; nothing in the controllers feeds them.
//
// Low cardinality by default: the previous system put free text (a condition message) and a timestamp (the
// kubeconfig expiry) into labels, which creates a new series whenever they change. By default those labels carry a
// stable value instead (the condition reason, an empty expiry); --legacy-metrics=full restores the old contents.
package legacymetrics

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/collector"
	imv1 "github.com/kyma-project/kim/operator/api/v1"

	// Registers the reconcile error and panic counters unexpected_stops_total reads (in its init), wherever this
	// collector is, not only in a process that happens to build controllers.
	_ "sigs.k8s.io/controller-runtime/pkg/controller"
)

// Modes of --legacy-metrics.
const (
	ModeOff  = "off"
	ModeLow  = "low"
	ModeFull = "full"
)

// Names of the previous system's metrics.
const (
	RuntimeState          = "infrastructure_manager_im_runtime_state"
	GardenerClusterState  = "infrastructure_manager_im_gardener_clusters_state"
	KubeconfigExpiration  = "infrastructure_manager_im_kubeconfig_expiration"
	UnexpectedStops       = "unexpected_stops_total"
	runtimeControllerName = "runtime"
)

var (
	descRuntime = prometheus.NewDesc(RuntimeState, "Status.state of Runtime CRs (previous infrastructure manager's metric).",
		[]string{"runtimeId", "runtimeName", "shoot", "provider", "state", "message"}, nil)
	descGardenerCluster = prometheus.NewDesc(GardenerClusterState, "Status.state of GardenerCluster CRs (previous infrastructure manager's metric).",
		[]string{"runtimeId", "shoot", "state", "reason"}, nil)
	descExpiration = prometheus.NewDesc(KubeconfigExpiration, "Expiry of the kubeconfig in each runtime's Secret, Unix seconds (previous infrastructure manager's metric).",
		[]string{"runtimeId", "shoot", "expires", "rotationDuration", "expirationDuration"}, nil)
	descStops = prometheus.NewDesc(UnexpectedStops, "Reconciles of Runtimes that ended in an error or a panic (the previous infrastructure manager's unexpected state machine stops).",
		nil, nil)
)

// Collector computes the previous metrics from a reader of the operator's cache.
type Collector struct {
	KCP  client.Reader
	Full bool
	// Validity and RotationFraction of the kubeconfigs: the previous rotationDuration and expirationDuration labels.
	Validity         time.Duration
	RotationFraction float64
	// Stops reads the count behind unexpected_stops_total; nil: the Runtime controller's errors and panics.
	Stops func() (float64, bool)
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuntime, descGardenerCluster, descExpiration, descStops} {
		ch <- d
	}
}

// MetricType tells the type of each metric (operator/metrics' catalogue reads it).
func (c *Collector) MetricType(name string) string {
	if name == UnexpectedStops {
		return "counter"
	}
	return "gauge"
}

// Collect implements prometheus.Collector. A cache that cannot be read yet yields no samples rather than wrong ones.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var runtimes imv1.RuntimeList
	if err := c.KCP.List(ctx, &runtimes, client.UnsafeDisableDeepCopy); err == nil {
		for i := range runtimes.Items {
			rt := &runtimes.Items[i]
			id := rt.Labels[imv1.LabelRuntimeID]
			if id == "" {
				continue
			}
			message := "No value"
			if cond := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady); cond != nil {
				message = cond.Reason
				if c.Full {
					message = cond.Message
				}
			}
			ch <- prometheus.MustNewConstMetric(descRuntime, prometheus.GaugeValue, 1,
				id, rt.Name, rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type, string(rt.Status.State), message)
		}
	}
	var gcs imv1.GardenerClusterList
	if err := c.KCP.List(ctx, &gcs, client.UnsafeDisableDeepCopy); err == nil {
		for i := range gcs.Items {
			gc := &gcs.Items[i]
			id := gc.Labels[imv1.LabelRuntimeID]
			cond := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
			if id == "" || cond == nil {
				continue
			}
			ch <- prometheus.MustNewConstMetric(descGardenerCluster, prometheus.GaugeValue, 1, id, gc.Labels[imv1.LabelShootName], string(gc.Status.State), cond.Reason)
		}
	}
	var secrets corev1.SecretList
	if err := c.KCP.List(ctx, &secrets, client.UnsafeDisableDeepCopy, client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue}); err == nil {
		rotation := strconv.FormatFloat(c.Validity.Seconds()*c.RotationFraction, 'G', -1, 64)
		expiration := strconv.FormatFloat(c.Validity.Seconds(), 'G', -1, 64)
		for i := range secrets.Items {
			s := &secrets.Items[i]
			id := s.Labels[imv1.LabelRuntimeID]
			expires, err := time.Parse(time.RFC3339, s.Annotations[kubeconfig.AnnotationExpiresAt])
			if id == "" || err != nil {
				continue
			}
			label := ""
			if c.Full {
				label = strconv.FormatInt(expires.Unix(), 10)
			}
			ch <- prometheus.MustNewConstMetric(descExpiration, prometheus.GaugeValue, float64(expires.Unix()),
				id, s.Labels[imv1.LabelShootName], label, rotation, expiration)
		}
	}
	stops := c.Stops
	if stops == nil {
		stops = runtimeControllerStops
	}
	if v, ok := stops(); ok {
		ch <- prometheus.MustNewConstMetric(descStops, prometheus.CounterValue, v)
	}
}

// runtimeControllerStops sums controller-runtime's error and panic counters of the Runtime controller. They are
// registered by controller-runtime, not exported: registering a twin yields the original (AlreadyRegisteredError).
func runtimeControllerStops() (float64, bool) {
	var sum float64
	for name, help := range map[string]string{
		"controller_runtime_reconcile_errors_total": "Total number of reconciliation errors per controller",
		"controller_runtime_reconcile_panics_total": "Total number of reconciliation panics per controller",
	} {
		twin := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"controller"})
		err := ctrlmetrics.Registry.Register(twin)
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			if err == nil {
				ctrlmetrics.Registry.Unregister(twin)
			}
			return 0, false
		}
		vec, ok := already.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return 0, false
		}
		var m dto.Metric
		if err := vec.WithLabelValues(runtimeControllerName).Write(&m); err != nil {
			return 0, false
		}
		sum += m.GetCounter().GetValue()
	}
	return sum, true
}

// Register serves the previous metrics from the manager's cache (manager flag --legacy-metrics); mode is ModeLow or
// ModeFull. The composition root (operator/app, Options.LegacyMetrics) calls it once it has built the manager.
func Register(mgr manager.Manager, mode string, validity time.Duration, rotationFraction float64) error {
	if mode != ModeLow && mode != ModeFull {
		return fmt.Errorf("legacy metrics mode %q: want %s or %s", mode, ModeLow, ModeFull)
	}
	exported.Use(&Collector{KCP: mgr.GetClient(), Full: mode == ModeFull, Validity: validity, RotationFraction: rotationFraction})
	return nil
}

// exported is the one registration of the previous manager's metrics in the process.
var exported = &collector.Swappable{Describes: &Collector{}}
