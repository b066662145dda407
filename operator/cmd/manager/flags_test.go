package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseFlagsNamespaces(t *testing.T) {
	for _, tc := range []struct {
		reason          string
		args            []string
		env             map[string]string
		wantWatch       []string
		wantLease       string
		wantConfigMapNS string
	}{
		{
			reason:          "kustomize install: no OLM annotation, everything in the pod's namespace",
			env:             map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "KIM_WATCH_NAMESPACES": "", "POD_NAMESPACE": "kcp-system"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "kcp-system",
			wantConfigMapNS: "kcp-system",
		},
		{
			reason:          "OLM SingleNamespace: olm.targetNamespaces names another namespace; lease and ConfigMap stay home",
			env:             map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "KIM_WATCH_NAMESPACES": "kcp-system", "POD_NAMESPACE": "kim-operator"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "kim-operator",
			wantConfigMapNS: "kim-operator",
		},
		{
			reason:          "outside a cluster: the defaults of the options",
			args:            []string{"--config=/tmp/config.yaml"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "",
			wantConfigMapNS: "kcp-system",
		},
		{
			reason:          "flags win over the pod namespace",
			args:            []string{"--config-map=c", "--watch-namespaces=x", "--leader-election-namespace=y", "--config-map-namespace=z"},
			env:             map[string]string{"POD_NAMESPACE": "kcp-system"},
			wantWatch:       []string{"x"},
			wantLease:       "y",
			wantConfigMapNS: "z",
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := parseFlags(tc.args, env(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWatch, s.opts.WatchNamespaces); diff != "" {
				t.Errorf("watched namespaces (-want +got):\n%s", diff)
			}
			if s.opts.LeaderElectionNamespace != tc.wantLease || s.configMapNamespace != tc.wantConfigMapNS {
				t.Errorf("lease namespace %q, ConfigMap namespace %q; want %q, %q",
					s.opts.LeaderElectionNamespace, s.configMapNamespace, tc.wantLease, tc.wantConfigMapNS)
			}
		})
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		args    []string
		env     map[string]string
		wantHas string
	}{
		{reason: "no configuration at all", wantHas: "exactly one of --config-map"},
		{reason: "both a file and a ConfigMap", args: []string{"--config=/f"}, env: map[string]string{"KIM_CONFIG_MAP": "c"}, wantHas: "exactly one of --config-map"},
		{reason: "contradicting log formats", args: []string{"--config=/f", "--log-format=json", "--zap-encoder=console"}, wantHas: "contradicts --zap-encoder"},
		{reason: "unknown log format", args: []string{"--config=/f", "--log-format=xml"}, wantHas: "neither json nor console"},
		{reason: "a bad environment value", env: map[string]string{"KIM_RUNTIME_WORKERS": "many"}, wantHas: "KIM_RUNTIME_WORKERS"},
		{reason: "stray arguments", args: []string{"--config=/f", "extra"}, wantHas: "unexpected arguments"},
	} {
		_, err := parseFlags(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.wantHas) {
			t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.wantHas)
		}
	}
}

func TestVersionIgnoresEnvironment(t *testing.T) {
	s, err := parseFlags([]string{"--config=/f"}, env(map[string]string{"KIM_VERSION": "0.2.0"}), io.Discard)
	if err != nil || s.showVersion {
		t.Errorf("KIM_VERSION in the environment: err %v, showVersion %v", err, s != nil && s.showVersion)
	}
}

// logLine logs an error and an info line with the logger the flags configure and returns what was written.
func logLine(t *testing.T, args ...string) string {
	t.Helper()
	s, err := parseFlags(append([]string{"--config=/f"}, args...), env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := newLogger(s, &buf)
	log.Error(errors.New("boom"), "reconcile failed", "runtimeID", "rt-1")
	log.V(1).Info("debug detail")
	return buf.String()
}

// TestLoggingFlags: production logs are JSON with errors under controller-runtime's key "error" at level error; the
// standard --zap-* flags change format and verbosity, and the old --log-format no longer overrides them.
func TestLoggingFlags(t *testing.T) {
	out := logLine(t)
	var entry map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &entry); err != nil {
		t.Fatalf("default output is not JSON: %q", out)
	}
	if entry["level"] != "error" || entry["error"] != "boom" || entry["runtimeID"] != "rt-1" {
		t.Errorf("error entry %v: want level error, error boom, runtimeID rt-1", entry)
	}
	if _, ok := entry["ts"].(string); !ok {
		t.Errorf("timestamp %v is not ISO 8601 text", entry["ts"])
	}
	if strings.Contains(out, "debug detail") {
		t.Error("debug line logged at the default level")
	}

	console := logLine(t, "--zap-encoder=console", "--zap-log-level=debug")
	if strings.HasPrefix(console, "{") || !strings.Contains(console, "debug detail") {
		t.Errorf("--zap-encoder=console --zap-log-level=debug ignored: %q", console)
	}
	if alias := logLine(t, "--log-format=console"); strings.HasPrefix(alias, "{") {
		t.Errorf("--log-format=console (alias) ignored: %q", alias)
	}
}
