package main

import (
	"io"
	"strings"
	"testing"
)

// TestMigrationPreviousBootstrapperFlags: the previous manager's runtime bootstrapper (issue 39 item 4). Switched on,
// it copied a config ConfigMap, the pull secret registry-credentials and a ClusterTrustBundle into every runtime,
// applied manifests and waited for the Deployment rt-bootstrapper-controller-manager (U:internal/rtbootstrapper);
// this operator does none of that as it did, so --runtime-bootstrapper-enabled=true is refused at start, naming each
// setting not carried out, never accepted and ignored. Off (its default), the settings had no effect there either
// and are accepted.
func TestMigrationPreviousBootstrapperFlags(t *testing.T) {
	// The previous manager's values: its defaults, and a landscape's pull secret and trust bundle.
	siblings := []string{
		"--runtime-bootstrapper-manifests-config-map-name=runtime-bootstrapper-manifests",
		"--runtime-bootstrapper-kcp-config-name=rt-bootstrapper-config",
		"--runtime-bootstrapper-kcp-pull-secret-name=rt-bootstrapper-pull-secret",
		"--runtime-bootstrapper-kcp-cluster-trust-bundle=kyma-registry-ca",
		"--runtime-bootstrapper-skr-config-name=rt-bootstrapper-config",
		"--runtime-bootstrapper-skr-pull-secret-name=registry-credentials",
		"--runtime-bootstrapper-skr-cluster-trust-bundle=kyma-registry-ca",
		"--runtime-bootstrapper-skr-namespace=kyma-system",
		"--runtime-bootstrapper-skr-deployment-name=rt-bootstrapper-controller-manager",
	}
	base := []string{"--converter-config-filepath=/converter-config/converter_config.json"}
	cases := []struct {
		name     string
		args     []string
		wantErr  []string // each must be in the error; none: accepted
		wantNot  []string // must not be in the error
		warnings int      // accepted: deprecation warnings of the bootstrapper flags
	}{
		{name: "on, with every setting", args: append([]string{"--runtime-bootstrapper-enabled=true"}, siblings...),
			wantErr: []string{"--runtime-bootstrapper-enabled=true cannot be honoured", "runtime.bootstrap",
				"--runtime-bootstrapper-manifests-config-map-name=runtime-bootstrapper-manifests:",
				"--runtime-bootstrapper-kcp-config-name=rt-bootstrapper-config:",
				"--runtime-bootstrapper-kcp-pull-secret-name=rt-bootstrapper-pull-secret:",
				"--runtime-bootstrapper-skr-pull-secret-name=registry-credentials:",
				"--runtime-bootstrapper-kcp-cluster-trust-bundle=kyma-registry-ca:",
				"--runtime-bootstrapper-skr-deployment-name=rt-bootstrapper-controller-manager:"}},
		{name: "on alone: its defaults are named", args: []string{"--runtime-bootstrapper-enabled"},
			wantErr: []string{"--runtime-bootstrapper-kcp-config-name=rt-bootstrapper-config (its default)",
				"--runtime-bootstrapper-skr-pull-secret-name=registry-credentials (its default)",
				"--runtime-bootstrapper-skr-deployment-name=rt-bootstrapper-controller-manager (its default)"},
			wantNot: []string{"--runtime-bootstrapper-kcp-pull-secret-name", "--runtime-bootstrapper-kcp-cluster-trust-bundle"}},
		{name: "on, the settings given empty as its Helm chart does", args: []string{"--runtime-bootstrapper-enabled=true",
			"--runtime-bootstrapper-kcp-pull-secret-name=", "--runtime-bootstrapper-kcp-cluster-trust-bundle="},
			wantErr: []string{"--runtime-bootstrapper-kcp-config-name"},
			wantNot: []string{"--runtime-bootstrapper-kcp-pull-secret-name", "--runtime-bootstrapper-kcp-cluster-trust-bundle"}},
		{name: "off, with every setting: accepted", args: append([]string{"--runtime-bootstrapper-enabled=false"}, siblings...), warnings: 10},
		{name: "absent, with every setting: accepted", args: siblings, warnings: 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseFlags(append(append([]string{}, base...), tc.args...), env(nil), io.Discard)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				n := 0
				for _, w := range s.previous.warnings {
					if strings.Contains(w, "runtime-bootstrapper") {
						n++
					}
				}
				if n != tc.warnings {
					t.Errorf("%d bootstrapper warnings, want %d: %v", n, tc.warnings, s.previous.warnings)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted; want a refusal")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(err.Error(), not) {
					t.Errorf("error names %q, which was not set:\n%v", not, err)
				}
			}
		})
	}
}
