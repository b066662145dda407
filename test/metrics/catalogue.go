// Package metrics lists every metric the manager exports on its /metrics endpoint (the previous infrastructure
// manager's, which it exports with --legacy-metrics, and the end-to-end probe's, which kim probe pushes, included),
// with its type and label names, by registering the operator's real collectors into a recording registry. Tests use it to check that alerts,
// dashboards, promtool test series and docs name only metrics and labels that exist. The manager does not import it.
package metrics

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/internal/health"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/controllers/shootreaper"
	"github.com/kyma-project/kim/operator/legacymetrics"
	"github.com/kyma-project/kim/operator/probe"
	"github.com/kyma-project/kim/operator/version"
	"github.com/kyma-project/kim/operator/version/metric"
)

// Family is one exported metric.
type Family struct {
	Name string
	// Type is gauge, counter or histogram.
	Type string
	// Histogram families are exported as <name>_bucket (with label le), <name>_sum and <name>_count.
	Histogram bool
	// Labels are the label names of every series, constant labels included, sorted.
	Labels []string
}

// Catalogue maps metric names to families.
type Catalogue map[string]Family

// Load registers the operator's collectors (the same constructors the manager runs) into a recording registry.
func Load() (Catalogue, error) {
	rec := &recorder{cat: Catalogue{}}
	kymaruntime.NewMetrics(rec)
	shootreaper.NewMetrics(rec)
	gardenercluster.NewMetrics(rec)
	registrycachesync.NewMetrics(rec)
	auditlogpool.NewMetrics(rec)
	probe.NewMetrics(rec)
	serviceaccountkubeconfig.NewMetrics(rec)
	app.NewGardenerRequests(rec)
	if _, err := health.NewGardenerChecker(&rest.Config{Host: "https://garden.invalid"}, rec); err != nil {
		return nil, fmt.Errorf("gardener health gauge: %w", err)
	}
	for _, c := range []prometheus.Collector{metric.NewCollector(version.Get()), &shootreaper.FleetCollector{}, &auditlogpool.PoolCollector{},
		&legacymetrics.Collector{}} {
		if err := rec.Register(c); err != nil {
			return nil, err
		}
	}
	if len(rec.errs) > 0 {
		return nil, errors.Join(rec.errs...)
	}
	return rec.cat, nil
}

// Series resolves a series name as Prometheus stores it (a histogram's _bucket/_sum/_count, not its family name,
// which PromQL does not find) to its family and the label names the series has.
func (c Catalogue) Series(name string) (Family, []string, bool) {
	if f, ok := c[name]; ok && !f.Histogram {
		return f, f.Labels, true
	}
	for suffix, extra := range map[string][]string{"_bucket": {"le"}, "_sum": nil, "_count": nil} {
		if f, ok := c[strings.TrimSuffix(name, suffix)]; ok && f.Histogram && strings.HasSuffix(name, suffix) {
			return f, append(append([]string{}, f.Labels...), extra...), true
		}
	}
	return Family{}, nil, false
}

// Has reports whether name is a family or one of its series, as prose may name either.
func (c Catalogue) Has(name string) bool {
	_, _, series := c.Series(name)
	_, family := c[name]
	return series || family
}

// Names returns the metric names, sorted.
func (c Catalogue) Names() []string {
	out := make([]string, 0, len(c))
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// InControllerRuntimeRegistry tells whether controller-runtime's registry (the one the manager serves, holding
// controller-runtime's own controller_runtime_*, workqueue_*, leader_election_* and rest_client_* metrics) has a
// metric of that name, or a histogram whose series it is (<name>_bucket, _sum, _count): registering another
// collector under the name fails exactly then. Their labels and types are not visible this way (so the _bucket of a
// gauge passes too).
func InControllerRuntimeRegistry(name string) bool {
	if registered(name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if family, ok := strings.CutSuffix(name, suffix); ok && registered(family) {
			return true
		}
	}
	return false
}

// registered tells whether controller-runtime's registry has a collector of exactly that name.
func registered(name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe of the metrics catalogue"})
	if err := ctrlmetrics.Registry.Register(probe); err != nil {
		return true
	}
	ctrlmetrics.Registry.Unregister(probe)
	return false
}

// TypedCollector is a collector of metrics of different types that tells each one's (gauge, counter).
type TypedCollector interface {
	prometheus.Collector
	MetricType(name string) string
}

// recorder is a prometheus.Registerer that describes what is registered instead of serving it.
type recorder struct {
	cat  Catalogue
	errs []error
}

func (r *recorder) Register(c prometheus.Collector) error {
	typ := ""
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		typ = "histogram"
	case prometheus.Gauge, *prometheus.GaugeVec: // before Counter: a Gauge has Inc and Add too
		typ = "gauge"
	case prometheus.Counter, *prometheus.CounterVec:
		typ = "counter"
	case prometheus.GaugeFunc: // last: the interface is any Metric that is also a Collector
		typ = "gauge"
	case shootreaper.GaugesOnly:
		typ = "gauge"
	case TypedCollector:
		typ = "per metric"
	default:
		r.errs = append(r.errs, fmt.Errorf("collector %T: unknown metric type", c))
	}
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		f, err := parseDesc(d.String())
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		f.Type, f.Histogram = typ, typ == "histogram"
		if tc, ok := c.(TypedCollector); ok {
			f.Type = tc.MetricType(f.Name)
		}
		r.cat[f.Name] = f
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

var (
	descPattern  = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*, constLabels: \{(.*)\}, variableLabels: \{(.*)\}\}$`)
	constLabelRe = regexp.MustCompile(`(?:^|,)([a-zA-Z_][a-zA-Z0-9_]*)="`)
)

// parseDesc reads name and label names from Desc.String(), the only way client_golang exposes them. A format it does
// not recognise is an error (the tests using the catalogue then fail) rather than an empty label list.
func parseDesc(s string) (Family, error) {
	m := descPattern.FindStringSubmatch(s)
	if m == nil {
		return Family{}, fmt.Errorf("unrecognised metric description %q", s)
	}
	f := Family{Name: m[1]}
	for _, cl := range constLabelRe.FindAllStringSubmatch(m[2], -1) {
		f.Labels = append(f.Labels, cl[1])
	}
	if m[3] != "" {
		for _, vl := range strings.Split(m[3], ",") {
			f.Labels = append(f.Labels, strings.TrimSuffix(strings.TrimPrefix(vl, "c("), ")"))
		}
	}
	sort.Strings(f.Labels)
	return f, nil
}
