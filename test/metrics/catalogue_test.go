package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestLoadFindsTheOperatorsMetrics(t *testing.T) {
	cat, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, labels := range map[string][]string{
		"kim_runtimes": {"provider", "state"},
		"kim_kubeconfig_expiration_timestamp_seconds": {"runtime_id", "shoot_name"},
		"kim_gardener_health":                         {"status", "url"},
		"kim_build_info":                              {"branch", "goarch", "goos", "goversion", "revision", "version"},
	} {
		f, ok := cat[name]
		if !ok {
			t.Errorf("%s missing from %v", name, cat.Names())
			continue
		}
		if diff := cmp.Diff(labels, f.Labels); diff != "" {
			t.Errorf("%s labels (-want +got):\n%s", name, diff)
		}
	}
	f, labels, ok := cat.Series("kim_runtime_provisioning_duration_seconds_bucket")
	if !ok || !f.Histogram || !cmp.Equal(labels, []string{"le"}) {
		t.Errorf("histogram bucket series: %+v %v %v", f, labels, ok)
	}
	if _, _, ok := cat.Series("kim_runtimes_bucket"); ok {
		t.Error("a gauge has no _bucket series")
	}
	for name, typ := range map[string]string{"kim_runtimes": "gauge", "kim_deletions_executed_total": "counter",
		"kim_runtime_provisioning_duration_seconds": "histogram", "kim_build_info": "gauge"} {
		if got := cat[name].Type; got != typ {
			t.Errorf("%s is a %q, want %s", name, got, typ)
		}
	}
}

func TestParseDesc(t *testing.T) {
	d := prometheus.NewDesc("x_total", "help with {braces}, commas", []string{"a", "b"}, prometheus.Labels{"c": "v,1", "d": "2"})
	f, err := parseDesc(d.String())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Family{Name: "x_total", Labels: []string{"a", "b", "c", "d"}}, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseDesc("Desc{something else}"); err == nil {
		t.Error("an unknown format must be an error")
	}
}

// TestInControllerRuntimeRegistry: the controller-runtime metrics the manager's alerts use are found by the names
// Prometheus stores (a histogram by its _bucket series too); a made-up name is not.
func TestInControllerRuntimeRegistry(t *testing.T) {
	for _, name := range []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
		"workqueue_depth", "workqueue_longest_running_processor_seconds", "workqueue_queue_duration_seconds_bucket",
		"workqueue_queue_duration_seconds_count", "leader_election_master_status"} {
		if !InControllerRuntimeRegistry(name) {
			t.Errorf("%s is not found in controller-runtime's registry", name)
		}
	}
	for _, name := range []string{"workqueue_queue_wait_seconds", "leader_election_status"} {
		if InControllerRuntimeRegistry(name) {
			t.Errorf("%s is found, but controller-runtime registers no such metric", name)
		}
	}
}
