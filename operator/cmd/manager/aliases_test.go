package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// previousHelmArgs are the previous infrastructure manager's Deployment arguments (testdata/previous-helm-args.yaml).
func previousHelmArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("testdata/previous-helm-args.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Args []string `json:"args"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Args
}

// TestMigrationPreviousHelmArguments: the previous system's Helm-rendered arguments set the equivalent settings,
// every previous name is a deprecation warning, and the ones without an equivalent are accepted and ignored.
func TestMigrationPreviousHelmArguments(t *testing.T) {
	args := previousHelmArgs(t)
	s, err := parseFlags(args, env(map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "POD_NAMESPACE": "kcp-system"}), io.Discard)
	if err != nil {
		t.Fatalf("the previous arguments are refused: %v", err)
	}
	o := s.opts
	for _, c := range []struct {
		flag      string
		got, want any
	}{
		{"gardener-project-name", o.GardenerProject, "kyma-dev"},
		{"kubeconfig-expiration-time", o.KubeconfigValidity, 24 * time.Hour},
		{"minimal-rotation-time", o.KubeconfigRotationFraction, 0.6},
		{"gardener-ratelimiter-qps", o.GardenerQPS, float32(5)},
		{"gardener-ratelimiter-burst", o.GardenerBurst, 5},
		{"runtime-ctrl-workers-cnt", o.RuntimeWorkers, 25},
		{"gardener-cluster-ctrl-workers-cnt", o.GardenerClusterWorkers, 25},
		{"leader-elect", o.LeaderElection, true},
		{"metrics-bind-address", o.MetricsAddr, ":8080"},
		{"health-probe-bind-address", o.ProbeAddr, ":8081"},
		{"gardener-kubeconfig-path", s.gardenKubeconfig, "/gardener/kubeconfig/kubeconfig"},
		{"KIM_CONFIG_MAP", s.configMap, "kim-manager-config"},
	} {
		if c.got != c.want {
			t.Errorf("--%s: got %v, want %v", c.flag, c.got, c.want)
		}
	}
	if err := o.Validate(); err != nil {
		t.Errorf("the options of the previous arguments do not validate: %v", err)
	}
	previous := 0
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if _, ok := s.previous.used[name]; ok {
			previous++
		}
	}
	if previous != 18 || len(s.previous.warnings) != previous {
		t.Errorf("%d previous flags recognised, %d warnings; want 18 each: %v", previous, len(s.previous.warnings), s.previous.warnings)
	}
	for _, w := range s.previous.warnings {
		if !strings.Contains(w, "deprecated") {
			t.Errorf("warning %q does not say deprecated", w)
		}
	}
}

func TestMigrationPreviousFlagConflicts(t *testing.T) {
	base := []string{"--config=/tmp/c.yaml"}
	for _, tc := range []struct {
		reason string
		args   []string
		ok     bool
	}{
		{"a previous name alone", []string{"--gardener-project-name=a"}, true},
		{"both names with the same value", []string{"--gardener-project=a", "--gardener-project-name=a"}, true},
		{"both names with different values, new first", []string{"--gardener-project=a", "--gardener-project-name=b"}, false},
		{"both names with different values, previous first", []string{"--runtime-ctrl-workers-cnt", "5", "--runtime-workers", "6"}, false},
		{"a bad value names the flag it sets", []string{"--kubeconfig-expiration-time=soon"}, false},
		{"an ignored boolean without value", []string{"--structured-auth-enabled"}, true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := parseFlags(append(append([]string{}, base...), tc.args...), env(nil), io.Discard)
			if (err == nil) != tc.ok {
				t.Errorf("parseFlags(%v) = %v, want ok=%t", tc.args, err, tc.ok)
			}
		})
	}
}
