package config

import (
	"strings"
	"testing"
)

// TestBootstrapRolloutKeys: the rollout of the bootstrap manifests is on by default where bootstrap manifests are
// configured, can be switched to all at once (share 1), and refuses values outside its ranges naming the key.
func TestBootstrapRolloutKeys(t *testing.T) {
	const bootstrap = minimal + "runtime: {bootstrap: {configMap: {name: b}%s}}\n"
	policy := func(t *testing.T, rollout string) (float64, float64) {
		t.Helper()
		cfg, err := Parse([]byte(strings.Replace(bootstrap, "%s", rollout, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Runtime.Bootstrap.Rollout.Policy()
	}
	if share, mf := policy(t, ""); share != DefaultRolloutShare || mf != DefaultRolloutMaxFailures || share >= 1 {
		t.Errorf("unset: share %v, maxFailures %v; want the defaults %v, %v (waves on)", share, mf, DefaultRolloutShare, DefaultRolloutMaxFailures)
	}
	if share, mf := policy(t, ", rollout: {share: 1, maxFailures: 0}"); share != 1 || mf != 0 {
		t.Errorf("set: share %v, maxFailures %v; want 1, 0", share, mf)
	}
	for _, tc := range []struct{ reason, rollout, want string }{
		{"share zero", ", rollout: {share: 0}", "runtime.bootstrap.rollout.share"},
		{"share above one", ", rollout: {share: 1.5}", "runtime.bootstrap.rollout.share"},
		{"negative share", ", rollout: {share: -0.1}", "runtime.bootstrap.rollout.share"},
		{"negative maxFailures", ", rollout: {maxFailures: -0.01}", "runtime.bootstrap.rollout.maxFailures"},
		{"maxFailures above one", ", rollout: {maxFailures: 2}", "runtime.bootstrap.rollout.maxFailures"},
	} {
		_, err := Parse([]byte(strings.Replace(bootstrap, "%s", tc.rollout, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error naming %s, got %v", tc.reason, tc.want, err)
		}
	}
}
