package gardenercluster

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Metric label values. Labels carry identifiers only, never free text, so the number of series stays bounded.
const (
	OutcomeSuccess       = "success"
	OutcomeShootNotFound = "shoot_not_found"
	OutcomeShootNotReady = "shoot_not_ready"
	OutcomeForbidden     = "forbidden"
	OutcomeTransient     = "transient"

	TriggerLabelTime   = "time"
	TriggerLabelForced = "forced"
)

var (
	// ExpirationTimestamp is when the kubeconfig in a cluster's Secret expires (Unix seconds).
	ExpirationTimestamp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kim_kubeconfig_expiration_timestamp_seconds",
		Help: "Expiry of the admin kubeconfig stored for a GardenerCluster, as Unix time.",
	}, []string{"runtime_id", "shoot_name"})
	// Rotations counts kubeconfigs replaced in existing Secrets, by what triggered them: time (the rotation policy,
	// including expired or unreadable Secrets) or forced (the force-rotation annotation).
	Rotations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kim_kubeconfig_rotations_total",
		Help: "Kubeconfigs replaced in existing Secrets, by trigger (time, forced).",
	}, []string{"trigger"})
	// GardenerRequests counts admin kubeconfig requests to Gardener by outcome.
	GardenerRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kim_gardener_kubeconfig_requests_total",
		Help: "Admin kubeconfig requests sent to Gardener, by outcome.",
	}, []string{"outcome"})
)

func init() {
	metrics.Registry.MustRegister(ExpirationTimestamp, Rotations, GardenerRequests)
	// Start every known series at zero, so dashboards and alerts see them before the first event.
	for _, o := range []string{OutcomeSuccess, OutcomeShootNotFound, OutcomeShootNotReady, OutcomeForbidden, OutcomeTransient} {
		GardenerRequests.WithLabelValues(o)
	}
	Rotations.WithLabelValues(TriggerLabelTime)
	Rotations.WithLabelValues(TriggerLabelForced)
}

func outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, ports.ErrShootNotFound):
		return OutcomeShootNotFound
	case errors.Is(err, ports.ErrShootNotReady):
		return OutcomeShootNotReady
	case errors.Is(err, ports.ErrForbidden):
		return OutcomeForbidden
	default:
		return OutcomeTransient
	}
}

func triggerLabel(t kubeconfig.Trigger) string {
	if t == kubeconfig.TriggerForced {
		return TriggerLabelForced
	}
	return TriggerLabelTime
}

func forgetCluster(runtimeID string) {
	ExpirationTimestamp.DeletePartialMatch(prometheus.Labels{"runtime_id": runtimeID})
}
