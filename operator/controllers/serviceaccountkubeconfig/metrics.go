package serviceaccountkubeconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

var (
	// ExpirationTimestamp is when the token in a ServiceAccountKubeconfig's Secret expires (Unix seconds).
	ExpirationTimestamp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kim_serviceaccount_kubeconfig_expiration_timestamp_seconds",
		Help: "Expiry of the token in a ServiceAccountKubeconfig's Secret, as Unix time.",
	}, []string{"namespace", "name"})
	// Events counts what happened to ServiceAccountKubeconfigs, by the event's stable reason.
	Events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kim_serviceaccount_kubeconfig_events_total",
		Help: "Events of ServiceAccountKubeconfigs (issued, rotated, refused, removed, ...), by reason.",
	}, []string{"reason"})
)

func init() {
	metrics.Registry.MustRegister(ExpirationTimestamp, Events)
	// Start the series alerts watch at zero, so they exist before the first event.
	for _, r := range []string{usecase.ReasonKubeconfigIssued, usecase.ReasonKubeconfigRotated, usecase.ReasonTokenRequestFailed,
		usecase.ReasonEscalationRefused, usecase.EventRuntimeObjectsLeftBehind} {
		Events.WithLabelValues(r)
	}
}

// observe exports the expiry of s's kubeconfig.
func observe(s *imv1.ServiceAccountKubeconfig) {
	if s.Status.ExpiresAt != nil {
		ExpirationTimestamp.WithLabelValues(s.Namespace, s.Name).Set(float64(s.Status.ExpiresAt.Unix()))
	}
}

// forget drops the series of a ServiceAccountKubeconfig that is gone.
func forget(namespace, name string) {
	ExpirationTimestamp.DeleteLabelValues(namespace, name)
}
