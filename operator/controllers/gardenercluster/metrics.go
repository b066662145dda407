package gardenercluster

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
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

// Metrics of kubeconfig management.
type Metrics struct {
	// ExpirationTimestamp is when the kubeconfig in a cluster's Secret expires (Unix seconds).
	ExpirationTimestamp *prometheus.GaugeVec
	// Rotations counts kubeconfigs replaced in existing Secrets, by what triggered them: time (the rotation policy,
	// including expired or unreadable Secrets) or forced (the force-rotation annotation).
	Rotations *prometheus.CounterVec
	// GardenerRequests counts admin kubeconfig requests to Gardener by outcome.
	GardenerRequests *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: controller-runtime's registry); a second
// call with the same registry returns the collectors registered first.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ExpirationTimestamp: skeleton.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kim_kubeconfig_expiration_timestamp_seconds",
			Help: "Expiry of the admin kubeconfig stored for a GardenerCluster, as Unix time.",
		}, []string{"runtime_id", "shoot_name"})),
		Rotations: skeleton.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kim_kubeconfig_rotations_total",
			Help: "Kubeconfigs replaced in existing Secrets, by trigger (time, forced).",
		}, []string{"trigger"})),
		GardenerRequests: skeleton.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kim_gardener_kubeconfig_requests_total",
			Help: "Admin kubeconfig requests sent to Gardener, by outcome.",
		}, []string{"outcome"})),
	}
	// Start every known series at zero, so dashboards and alerts see them before the first event.
	for _, o := range Outcomes() {
		m.GardenerRequests.WithLabelValues(o)
	}
	m.Rotations.WithLabelValues(TriggerLabelTime)
	m.Rotations.WithLabelValues(TriggerLabelForced)
	return m
}

// Outcomes are the outcome label values of kim_gardener_kubeconfig_requests_total.
func Outcomes() []string {
	return []string{OutcomeSuccess, OutcomeShootNotFound, OutcomeShootNotReady, OutcomeForbidden, OutcomeTransient}
}

// Collectors returns the collectors (for the metrics catalogue).
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.ExpirationTimestamp, m.Rotations, m.GardenerRequests}
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

func (m *Metrics) forget(runtimeID string) {
	m.ExpirationTimestamp.DeletePartialMatch(prometheus.Labels{"runtime_id": runtimeID})
}

// countingIssuer counts every request to Gardener the moment its answer arrives (before the kubeconfig is written:
// whoever sees the Secret sees the request counted).
type countingIssuer struct {
	ports.KubeconfigIssuer
	m *Metrics
}

// IssueAdminKubeconfig implements ports.KubeconfigIssuer.
func (c countingIssuer) IssueAdminKubeconfig(ctx context.Context, shoot string, validity time.Duration) (ports.IssuedKubeconfig, error) {
	issued, err := c.KubeconfigIssuer.IssueAdminKubeconfig(ctx, shoot, validity)
	c.m.GardenerRequests.WithLabelValues(outcome(err)).Inc()
	return issued, err
}
