package app

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApplyEnv(t *testing.T) {
	for _, tc := range []struct {
		reason      string
		env         map[string]string
		args        []string
		wantNS      []string
		wantQPS     float32
		wantGrace   time.Duration
		wantApplied []string
		wantErrHas  string
	}{
		{reason: "nothing set keeps the defaults", wantNS: []string{"kcp-system"}, wantQPS: 50, wantGrace: -1},
		{
			reason:      "the environment replaces defaults (Subscription.spec.config.env)",
			env:         map[string]string{"KIM_WATCH_NAMESPACES": "a,b", "KIM_GARDENER_QPS": "7", "KIM_DELETION_GRACE_PERIOD": "1h"},
			wantNS:      []string{"a", "b"},
			wantQPS:     7,
			wantGrace:   time.Hour,
			wantApplied: []string{"deletion-grace-period", "gardener-qps", "watch-namespaces"},
		},
		{
			reason:      "a flag on the command line wins over the environment",
			env:         map[string]string{"KIM_GARDENER_QPS": "7"},
			args:        []string{"--gardener-qps=9"},
			wantNS:      []string{"kcp-system"},
			wantQPS:     9,
			wantGrace:   -1,
			wantApplied: []string{"gardener-qps"},
		},
		{
			reason:    "an empty variable (a downward-API annotation that OLM did not set) keeps the default",
			env:       map[string]string{"KIM_WATCH_NAMESPACES": "  "},
			wantNS:    []string{"kcp-system"},
			wantQPS:   50,
			wantGrace: -1,
		},
		{
			reason:     "a bad value names the variable",
			env:        map[string]string{"KIM_DELETION_GRACE_PERIOD": "three days"},
			wantErrHas: `KIM_DELETION_GRACE_PERIOD="three days"`,
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			o := DefaultOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			applied, err := ApplyEnv(fs, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantApplied, applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNS, o.WatchNamespaces); diff != "" {
				t.Errorf("watch namespaces (-want +got):\n%s", diff)
			}
			if o.GardenerQPS != tc.wantQPS || o.DeletionGracePeriod != tc.wantGrace {
				t.Errorf("qps %g grace %s, want %g %s", o.GardenerQPS, o.DeletionGracePeriod, tc.wantQPS, tc.wantGrace)
			}
		})
	}
}

func TestApplyEnvDocumentsTheVariableInUsage(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	if _, err := ApplyEnv(fs, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	if u := fs.Lookup("runtime-workers").Usage; !strings.HasSuffix(u, "[env KIM_RUNTIME_WORKERS]") {
		t.Errorf("usage %q does not name the variable", u)
	}
}
