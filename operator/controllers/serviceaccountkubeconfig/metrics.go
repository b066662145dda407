package serviceaccountkubeconfig

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Metrics of least-privilege kubeconfigs. Labels carry identifiers and stable reasons only.
type Metrics struct {
	// ExpirationTimestamp is when the token in a ServiceAccountKubeconfig's Secret expires (Unix seconds).
	ExpirationTimestamp *prometheus.GaugeVec
	// Events counts what happened to ServiceAccountKubeconfigs, by the event's stable reason.
	Events *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry); a second
// call with the same registry returns the collectors registered first.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ExpirationTimestamp: skeleton.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kim_serviceaccount_kubeconfig_expiration_timestamp_seconds",
			Help: "Expiry of the token in a ServiceAccountKubeconfig's Secret, as Unix time.",
		}, []string{"namespace", "name"})),
		Events: skeleton.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kim_serviceaccount_kubeconfig_events_total",
			Help: "Events of ServiceAccountKubeconfigs (issued, rotated, refused, removed, ...), by reason.",
		}, []string{"reason"})),
	}
	// Start the series alerts watch at zero, so they exist before the first event.
	for _, r := range []string{sakubeconfig.ReasonKubeconfigIssued, sakubeconfig.ReasonKubeconfigRotated, sakubeconfig.ReasonTokenRequestFailed,
		sakubeconfig.ReasonEscalationRefused, sakubeconfig.EventRuntimeObjectsLeftBehind} {
		m.Events.WithLabelValues(r)
	}
	return m
}

// observe exports the expiry of s's kubeconfig.
func (m *Metrics) observe(s *imv1.ServiceAccountKubeconfig) {
	if s.Status.ExpiresAt != nil {
		m.ExpirationTimestamp.WithLabelValues(s.Namespace, s.Name).Set(float64(s.Status.ExpiresAt.Unix()))
	}
}

// forget drops the series of a ServiceAccountKubeconfig that is gone.
func (m *Metrics) forget(namespace, name string) {
	m.ExpirationTimestamp.DeleteLabelValues(namespace, name)
}
