package manifests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
	"sigs.k8s.io/yaml"
)

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
	// Every series of the operator is filtered by the dashboard's namespace and job variables, so a Prometheus that
	// scrapes several installations (or the previous manager next to this one) shows one at a time.
	selector := regexp.MustCompile(`\b((?:kim|controller_runtime|workqueue)_[a-z_]+)(\{[^}]*\})?`)
	for _, s := range exprs {
		expr, err := metricsql.Parse(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if _, _, errs := c.check(expr); len(errs) > 0 {
			t.Errorf("dashboard query %s: %v", s, errors.Join(errs...))
		}
		for _, m := range selector.FindAllStringSubmatch(s, -1) {
			if !strings.Contains(m[2], `namespace=~"$namespace"`) || !strings.Contains(m[2], `job=~"$job"`) {
				t.Errorf("dashboard query %s: %s is not filtered by the namespace and job variables", s, m[1])
			}
		}
	}
	vars := map[string]bool{}
	if m, ok := doc.(map[string]any); ok {
		if tmpl, ok := m["templating"].(map[string]any); ok {
			for _, v := range tmpl["list"].([]any) {
				vars[v.(map[string]any)["name"].(string)] = true
			}
		}
	}
	if !vars["namespace"] || !vars["job"] {
		t.Errorf("the dashboard's variables %v lack namespace or job", vars)
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

// TestDashboardShipsForTheSidecar: the bundle (and so config/default, which it renders) carries the dashboard as the
// Grafana/Plutono dashboard sidecars load it: a ConfigMap labelled grafana_dashboard: "1" whose one key holds the
// dashboard file unchanged.
func TestDashboardShipsForTheSidecar(t *testing.T) {
	raw, err := os.ReadFile(repoPath("bundle", "manifests", "kim-dashboard_v1_configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Labels["grafana_dashboard"] != "1" {
		t.Errorf("%s %s with labels %v; want a ConfigMap labelled grafana_dashboard: \"1\"", cm.Kind, cm.Metadata.Name, cm.Metadata.Labels)
	}
	file, err := os.ReadFile(repoPath("config", "prometheus", "grafana", "kim-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 1 || cm.Data["kim-dashboard.json"] != string(file) {
		t.Errorf("the ConfigMap's data (keys %d) is not the dashboard file under kim-dashboard.json", len(cm.Data))
	}
}
