package cluster_test

import (
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		reason string
		codes  []cluster.ErrorCode
		want   cluster.Retryability
	}{
		{"no codes: unknown", nil, cluster.RetryUnknown},
		{"quota clears when capacity frees up", []cluster.ErrorCode{cluster.ErrInfraQuotaExceeded}, cluster.Retryable},
		{"rate limits clear with time", []cluster.ErrorCode{cluster.ErrInfraRateLimitsExceeded}, cluster.Retryable},
		{"dependencies clear when the other resource goes", []cluster.ErrorCode{cluster.ErrInfraDependencies, cluster.ErrRetryableInfraDependencies}, cluster.Retryable},
		{"configuration problems are retried", []cluster.ErrorCode{cluster.ErrConfigurationProblem}, cluster.Retryable},
		{"unauthenticated needs a person", []cluster.ErrorCode{cluster.ErrInfraUnauthenticated}, cluster.NotRetryable},
		{"unauthorized wins over a retryable code", []cluster.ErrorCode{cluster.ErrInfraQuotaExceeded, cluster.ErrInfraUnauthorized}, cluster.NotRetryable},
	}
	for _, tc := range cases {
		if got := cluster.Classify(tc.codes); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.reason, got, tc.want)
		}
	}
}

func TestForceDeletionAllowedMatchesGardener(t *testing.T) {
	allowed := []cluster.ErrorCode{cluster.ErrInfraUnauthenticated, cluster.ErrInfraUnauthorized, cluster.ErrInfraDependencies,
		cluster.ErrCleanupClusterResources, cluster.ErrConfigurationProblem}
	for _, c := range allowed {
		if !cluster.ForceDeletionAllowed([]cluster.ErrorCode{c}) {
			t.Errorf("Gardener accepts force-deletion for %s", c)
		}
	}
	for _, c := range []cluster.ErrorCode{cluster.ErrInfraQuotaExceeded, cluster.ErrRetryableConfigurationProblem, cluster.ErrProblematicWebhook} {
		if cluster.ForceDeletionAllowed([]cluster.ErrorCode{c}) {
			t.Errorf("Gardener rejects force-deletion for %s alone", c)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := cluster.Backoff{Base: 30 * time.Second, Max: 5 * time.Minute}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := b.Delay(i); got != w {
			t.Errorf("attempt %d: %s, want %s", i, got, w)
		}
	}
}
