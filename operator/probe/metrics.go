package probe

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"
)

// Metric names of the probe; the alerts KIMProbeFailing and KIMProbeNotRunning use them.
const (
	MetricSuccess   = "kim_probe_success"
	MetricDuration  = "kim_probe_phase_duration_seconds"
	MetricPhaseOK   = "kim_probe_phase_success"
	MetricLastRun   = "kim_probe_last_run_timestamp_seconds"
	MetricOrphans   = "kim_probe_orphans_cleaned"
	MetricTotalTime = "kim_probe_duration_seconds"
	// Job is the Pushgateway job the probe pushes to.
	Job = "kim-probe"
)

// Metrics are the probe's metrics of one run.
type Metrics struct {
	Success   prometheus.Gauge
	Duration  *prometheus.GaugeVec
	PhaseOK   *prometheus.GaugeVec
	LastRun   prometheus.Gauge
	Orphans   prometheus.Gauge
	TotalTime prometheus.Gauge
}

// NewMetrics creates the probe's metrics and registers them with reg (nil: none).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Success: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricSuccess,
			Help: "1 when the last probe provisioned a runtime, reached it with the issued kubeconfig and deleted it; 0 when it failed."}),
		Duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricDuration,
			Help: "Duration of each phase of the last probe (cleanup, create, ready, access, delete)."}, []string{"phase"}),
		PhaseOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricPhaseOK,
			Help: "1 for each phase of the last probe that succeeded, 0 for the one that failed."}, []string{"phase"}),
		LastRun:   prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastRun, Help: "When the last probe finished (Unix seconds)."}),
		Orphans:   prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricOrphans, Help: "Runtimes of earlier failed probes the last probe deleted."}),
		TotalTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricTotalTime, Help: "Duration of the last probe."}),
	}
	if reg != nil {
		for _, c := range m.collectors() {
			reg.MustRegister(c)
		}
	}
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Success, m.Duration, m.PhaseOK, m.LastRun, m.Orphans, m.TotalTime}
}

// Observe records a result.
func (m *Metrics) Observe(r Result) {
	m.Success.Set(boolValue(r.Success))
	for _, ph := range r.Phases {
		m.Duration.WithLabelValues(ph.Name).Set(ph.Duration.Seconds())
		m.PhaseOK.WithLabelValues(ph.Name).Set(boolValue(ph.OK))
	}
	m.LastRun.Set(float64(r.Finished.Unix()))
	m.Orphans.Set(float64(r.OrphansCleaned))
	m.TotalTime.Set(r.Finished.Sub(r.Started).Seconds())
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Push replaces the probe's metrics in a Prometheus Pushgateway (job kim-probe, grouped by instance).
func (m *Metrics) Push(url, instance string) error {
	p := push.New(url, Job).Grouping("instance", instance)
	for _, c := range m.collectors() {
		p = p.Collector(c)
	}
	if err := p.Push(); err != nil {
		return fmt.Errorf("push the probe's metrics to %s: %w", url, err)
	}
	return nil
}

// WriteFile writes the metrics in Prometheus' text format, for node-exporter's textfile collector (atomically: a
// scrape never sees half a file).
func (m *Metrics) WriteFile(path string) error {
	reg := prometheus.NewRegistry()
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	families, err := reg.Gather()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kim-probe-*.prom")
	if err != nil {
		return fmt.Errorf("write the probe's metrics: %w", err)
	}
	defer os.Remove(tmp.Name())
	enc := expfmt.NewEncoder(tmp, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			_ = tmp.Close()
			return fmt.Errorf("write the probe's metrics: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
