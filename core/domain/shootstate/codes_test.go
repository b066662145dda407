package shootstate_test

import (
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/shootstate"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		reason string
		codes  []shootstate.ErrorCode
		want   shootstate.Retryability
	}{
		{"no codes: unknown", nil, shootstate.RetryUnknown},
		{"quota clears when capacity frees up", []shootstate.ErrorCode{shootstate.ErrInfraQuotaExceeded}, shootstate.Retryable},
		{"rate limits clear with time", []shootstate.ErrorCode{shootstate.ErrInfraRateLimitsExceeded}, shootstate.Retryable},
		{"dependencies clear when the other resource goes", []shootstate.ErrorCode{shootstate.ErrInfraDependencies, shootstate.ErrRetryableInfraDependencies}, shootstate.Retryable},
		{"configuration problems are retried", []shootstate.ErrorCode{shootstate.ErrConfigurationProblem}, shootstate.Retryable},
		{"unauthenticated needs a person", []shootstate.ErrorCode{shootstate.ErrInfraUnauthenticated}, shootstate.NotRetryable},
		{"unauthorized wins over a retryable code", []shootstate.ErrorCode{shootstate.ErrInfraQuotaExceeded, shootstate.ErrInfraUnauthorized}, shootstate.NotRetryable},
	}
	for _, tc := range cases {
		if got := shootstate.Classify(tc.codes); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.reason, got, tc.want)
		}
	}
}

func TestForceDeletionAllowedMatchesGardener(t *testing.T) {
	allowed := []shootstate.ErrorCode{shootstate.ErrInfraUnauthenticated, shootstate.ErrInfraUnauthorized, shootstate.ErrInfraDependencies,
		shootstate.ErrCleanupClusterResources, shootstate.ErrConfigurationProblem}
	for _, c := range allowed {
		if !shootstate.ForceDeletionAllowed([]shootstate.ErrorCode{c}) {
			t.Errorf("Gardener accepts force-deletion for %s", c)
		}
	}
	for _, c := range []shootstate.ErrorCode{shootstate.ErrInfraQuotaExceeded, shootstate.ErrRetryableConfigurationProblem, shootstate.ErrProblematicWebhook} {
		if shootstate.ForceDeletionAllowed([]shootstate.ErrorCode{c}) {
			t.Errorf("Gardener rejects force-deletion for %s alone", c)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := shootstate.Backoff{Base: 30 * time.Second, Max: 5 * time.Minute}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := b.Delay(i); got != w {
			t.Errorf("attempt %d: %s, want %s", i, got, w)
		}
	}
}
