package lifecycle_test

import (
	"testing"
	"time"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// TestRetryAttemptIsPartOfTheDecision: the attempt a retry request records is decided with it, counting only the
// retries of the shoot's current generation.
func TestRetryAttemptIsPartOfTheDecision(t *testing.T) {
	cases := []struct {
		reason            string
		attempts          int
		retriedGeneration int64
		wantAction        lc.Action
		wantAttempt       int
	}{
		{reason: "first retry of this generation", wantAction: lc.ActionRetryShoot, wantAttempt: 1},
		{reason: "second retry of this generation", attempts: 1, retriedGeneration: 5, wantAction: lc.ActionRetryShoot, wantAttempt: 2},
		{reason: "retries of an older generation do not count", attempts: 4, retriedGeneration: 4, wantAction: lc.ActionRetryShoot, wantAttempt: 1},
	}
	for _, tc := range cases {
		in := ready()
		in.Shoot = failedShoot(shootstate.ErrInfraRateLimitsExceeded)
		in.Shoot.LastOperation.LastUpdate = now.Add(-time.Hour)
		in.Shoot.Marks.RetryAttempts, in.Shoot.Marks.RetryShootGeneration = tc.attempts, tc.retriedGeneration
		in.Shoot.Marks.RetryRequestedAt = now.Add(-2 * time.Hour)
		d := lc.Decide(in, now)
		if d.Action != tc.wantAction || d.RetryAttempt != tc.wantAttempt {
			t.Errorf("%s: action %s attempt %d, want %s attempt %d", tc.reason, d.Action, d.RetryAttempt, tc.wantAction, tc.wantAttempt)
		}
	}
	if d := lc.Decide(ready(), now); d.RetryAttempt != 0 {
		t.Errorf("a decision without retry carries attempt %d", d.RetryAttempt)
	}
}
