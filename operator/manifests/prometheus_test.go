package manifests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/operator/metrics"
)

// labelSet is the set of label names of a series or expression result; nil means unknown (a metric the
// operator does not define, whose labels this test does not know).
type labelSet map[string]bool

func setOf(names ...string) labelSet {
	s := labelSet{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

// promChecker checks PromQL expressions against the metrics the code registers.
type promChecker struct {
	catalogue metrics.Catalogue
	// recorded are the series of recording rules, with the labels of their expressions.
	recorded map[string]labelSet
}

// seriesLabels resolves a series name: the operator's metrics with their labels; controller-runtime's metrics by
// name (they are registered in its registry; their labels are not visible to this test); Prometheus' synthetic `up`.
func (c *promChecker) seriesLabels(name string) (labelSet, error) {
	if _, labels, ok := c.catalogue.Series(name); ok {
		return setOf(labels...), nil
	}
	if l, ok := c.recorded[name]; ok {
		return l, nil
	}
	if name == "up" {
		return setOf("job", "instance"), nil
	}
	if !strings.HasPrefix(name, "kim_") && metrics.InControllerRuntimeRegistry(name) {
		return nil, nil
	}
	return nil, fmt.Errorf("metric %s is not registered by the operator (known: %v)", name, c.catalogue.Names())
}

// check validates every selector and label of the expression and returns the labels of its result (nil: unknown)
// and whether it is a scalar.
func (c *promChecker) check(e metricsql.Expr) (labelSet, bool, []error) {
	switch e := e.(type) {
	case *metricsql.NumberExpr, *metricsql.StringExpr, *metricsql.DurationExpr:
		return labelSet{}, true, nil
	case *metricsql.MetricExpr:
		return c.checkSelector(e)
	case *metricsql.RollupExpr:
		return c.check(e.Expr)
	case *metricsql.FuncExpr:
		return c.checkFunc(e)
	case *metricsql.AggrFuncExpr:
		return c.checkAggr(e)
	case *metricsql.BinaryOpExpr:
		return c.checkBinary(e)
	default:
		return nil, false, []error{fmt.Errorf("expression %T (%s) is not understood by this test; extend it", e, e.AppendString(nil))}
	}
}

func (c *promChecker) checkSelector(e *metricsql.MetricExpr) (labelSet, bool, []error) {
	var errs []error
	var out labelSet
	for _, group := range e.LabelFilterss {
		name := ""
		for _, f := range group {
			if f.Label == "__name__" && !f.IsRegexp && !f.IsNegative {
				name = f.Value
			}
		}
		labels, err := c.seriesLabels(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range group {
			if f.Label != "__name__" && labels != nil && !labels[f.Label] {
				errs = append(errs, fmt.Errorf("%s has no label %q (labels: %v)", name, f.Label, sortedNames(labels)))
			}
		}
		out = labels
	}
	return out, false, errs
}

func (c *promChecker) checkFunc(e *metricsql.FuncExpr) (labelSet, bool, []error) {
	var errs []error
	var args []labelSet
	for _, a := range e.Args {
		l, _, es := c.check(a)
		errs = append(errs, es...)
		args = append(args, l)
	}
	switch e.Name {
	case "time", "vector", "scalar":
		return labelSet{}, e.Name != "vector", errs
	case "absent", "absent_over_time":
		return labelSet{}, false, errs // the equality matchers become labels; none are used for labels here
	case "histogram_quantile":
		if len(args) < 2 || args[1] == nil {
			return nil, false, errs
		}
		if !args[1]["le"] {
			errs = append(errs, errors.New("histogram_quantile over a vector without the label le"))
		}
		out := labelSet{}
		for l := range args[1] {
			if l != "le" {
				out[l] = true
			}
		}
		return out, false, errs
	}
	for _, l := range args { // rate, increase, *_over_time, timestamp, ...: the labels of the vector argument
		if len(args) > 0 {
			return l, false, errs
		}
	}
	return labelSet{}, false, errs
}

func (c *promChecker) checkAggr(e *metricsql.AggrFuncExpr) (labelSet, bool, []error) {
	var errs []error
	var in labelSet
	for _, a := range e.Args {
		l, scalar, es := c.check(a)
		errs = append(errs, es...)
		if !scalar {
			in = l
		}
	}
	for _, l := range e.Modifier.Args {
		if in != nil && !in[l] {
			errs = append(errs, fmt.Errorf("%s %s (%s): the aggregated series have no label %q", e.Name, e.Modifier.Op, strings.Join(e.Modifier.Args, ","), l))
		}
	}
	switch {
	case e.Name == "topk" || e.Name == "bottomk":
		return in, false, errs
	case strings.EqualFold(e.Modifier.Op, "by"):
		return setOf(e.Modifier.Args...), false, errs
	case strings.EqualFold(e.Modifier.Op, "without") && in != nil:
		out := labelSet{}
		for l := range in {
			out[l] = true
		}
		for _, l := range e.Modifier.Args {
			delete(out, l)
		}
		return out, false, errs
	case strings.EqualFold(e.Modifier.Op, "without"):
		return nil, false, errs
	}
	return labelSet{}, false, errs
}

func (c *promChecker) checkBinary(e *metricsql.BinaryOpExpr) (labelSet, bool, []error) {
	left, lScalar, errs := c.check(e.Left)
	right, rScalar, rErrs := c.check(e.Right)
	errs = append(errs, rErrs...)
	for _, l := range e.GroupModifier.Args {
		if left != nil && right != nil && !left[l] && !right[l] {
			errs = append(errs, fmt.Errorf("%s(%s): neither side has the label %q", e.GroupModifier.Op, strings.Join(e.GroupModifier.Args, ","), l))
		}
	}
	for _, l := range e.JoinModifier.Args {
		if right != nil && !right[l] {
			errs = append(errs, fmt.Errorf("%s(%s): the right side has no label %q", e.JoinModifier.Op, strings.Join(e.JoinModifier.Args, ","), l))
		}
	}
	switch {
	case lScalar && rScalar:
		return labelSet{}, true, errs
	case lScalar:
		return right, false, errs
	case strings.EqualFold(e.Op, "or") && left != nil && right != nil:
		out := labelSet{}
		for l := range left {
			out[l] = true
		}
		for l := range right {
			out[l] = true
		}
		return out, false, errs
	}
	if len(e.JoinModifier.Args) > 0 && left != nil {
		out := labelSet{}
		for l := range left {
			out[l] = true
		}
		for _, l := range e.JoinModifier.Args {
			out[l] = true
		}
		return out, false, errs
	}
	return left, false, errs
}

func sortedNames(s labelSet) []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func newPromChecker(t *testing.T) *promChecker {
	t.Helper()
	cat, err := metrics.Load()
	if err != nil {
		t.Fatal(err)
	}
	return &promChecker{catalogue: cat, recorded: map[string]labelSet{}}
}

type promRule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func loadRules(t *testing.T) []promRule {
	t.Helper()
	data, err := os.ReadFile(repoPath("config", "prometheus", "prometheus_rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Spec struct {
			Groups []struct {
				Name  string     `json:"name"`
				Rules []promRule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("decode prometheus_rule.yaml: %v", err)
	}
	var rules []promRule
	for _, g := range obj.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no rules found")
	}
	return rules
}

var templateLabel = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

// TestAlertsUseOnlyRegisteredMetricsAndLabels: every metric and label an alert or recording rule selects,
// aggregates by or joins on is one the code registers, and every {{ $labels.x }} of an alert is a label the
// expression's result has, so a renamed label cannot leave an alert empty or an annotation blank.
func TestAlertsUseOnlyRegisteredMetricsAndLabels(t *testing.T) {
	c := newPromChecker(t)
	for _, r := range loadRules(t) {
		name := r.Alert + r.Record
		expr, err := metricsql.Parse(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		out, _, errs := c.check(expr)
		for _, err := range errs {
			t.Errorf("%s: %v", name, err)
		}
		if r.Record != "" {
			c.recorded[r.Record] = out
			continue
		}
		for _, text := range r.Annotations {
			for _, m := range templateLabel.FindAllStringSubmatch(text, -1) {
				if _, static := r.Labels[m[1]]; !static && out != nil && !out[m[1]] {
					t.Errorf("%s: the annotation uses $labels.%s, but the expression's result has only %v", name, m[1], sortedNames(out))
				}
			}
		}
	}
}

// TestAlertTestsFeedOnlyRegisteredSeries: the promtool tests (config/prometheus/tests) feed series with names and
// labels the code exports; a made-up label would let a broken alert pass its test.
func TestAlertTestsFeedOnlyRegisteredSeries(t *testing.T) {
	c := newPromChecker(t)
	files, err := filepath.Glob(repoPath("config", "prometheus", "tests", "*_test.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests: %v", err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var suite struct {
			Tests []struct {
				InputSeries []struct {
					Series string `json:"series"`
				} `json:"input_series"`
			} `json:"tests"`
		}
		if err := yaml.Unmarshal(data, &suite); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range suite.Tests {
			for _, s := range tc.InputSeries {
				n++
				expr, err := metricsql.Parse(s.Series)
				if err != nil {
					t.Errorf("%s: series %s: %v", filepath.Base(f), s.Series, err)
					continue
				}
				if _, _, errs := c.check(expr); len(errs) > 0 {
					t.Errorf("%s: series %s: %v", filepath.Base(f), s.Series, errors.Join(errs...))
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d input series found; the check would prove nothing", n)
	}
}

// TestDashboardUsesOnlyRegisteredMetricsAndLabels applies the same check to the Grafana dashboard's queries.
func TestDashboardUsesOnlyRegisteredMetricsAndLabels(t *testing.T) {
	c := newPromChecker(t)
	data, err := os.ReadFile(repoPath("config", "prometheus", "grafana", "kim-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if len(exprs) < 5 {
		t.Fatalf("only %d queries found in the dashboard", len(exprs))
	}
	for _, s := range exprs {
		expr, err := metricsql.Parse(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if _, _, errs := c.check(expr); len(errs) > 0 {
			t.Errorf("dashboard query %s: %v", s, errors.Join(errs...))
		}
	}
}

// TestPromCheckerCatchesMadeUpLabels proves the checks can fail: the old kubeconfig-expiry alert rendered
// $labels.shoot, a label the metric does not have (it is shoot_name), and its test fed that made-up label.
func TestPromCheckerCatchesMadeUpLabels(t *testing.T) {
	c := newPromChecker(t)
	for _, tc := range []struct{ expr, wantErr string }{
		{`kim_kubeconfig_expiration_timestamp_seconds{runtime_id="rt-old",shoot="c-old"}`, `no label "shoot"`},
		{`sum by (shoot) (kim_kubeconfig_expiration_timestamp_seconds)`, `no label "shoot"`},
		{`rate(kim_made_up_total[5m])`, "not registered"},
		{`histogram_quantile(0.9, sum by (provider) (rate(kim_runtime_provisioning_duration_seconds_bucket[1h])))`, "aggregated series have no label \"provider\""},
	} {
		expr, err := metricsql.Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		_, _, errs := c.check(expr)
		if !strings.Contains(fmt.Sprint(errs), tc.wantErr) {
			t.Errorf("%s: errors %v, want one containing %q", tc.expr, errs, tc.wantErr)
		}
	}
	expr, _ := metricsql.Parse(`(kim_kubeconfig_expiration_timestamp_seconds - time()) < 4 * 3600`)
	out, _, _ := c.check(expr)
	if out["shoot"] || !out["shoot_name"] {
		t.Errorf("result labels %v: $labels.shoot must be reported as missing", sortedNames(out))
	}
}
