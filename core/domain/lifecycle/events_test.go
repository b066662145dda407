package lifecycle_test

import (
	"testing"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
)

// TestStateChangeEvent: a provisioning in its normal course gets one event from this decision, Ready; leaving
// Ready, failing, recovering and every problem while Pending keep theirs.
func TestStateChangeEvent(t *testing.T) {
	cases := []struct {
		reason     string
		from       lc.State
		fromReason lc.Reason
		to         lc.State
		toReason   lc.Reason
		want       bool
	}{
		{reason: "a new Runtime starts provisioning", from: "", to: lc.StatePending, toReason: lc.ReasonWaitingForGardener},
		{reason: "a new Runtime checks for a seed", from: "", to: lc.StatePending, toReason: lc.ReasonCheckingSeed},
		{reason: "Gardener finished, the kubeconfig is on its way", from: lc.StatePending, fromReason: lc.ReasonWaitingForGardener,
			to: lc.StatePending, toReason: lc.ReasonWaitingForKubeconfig},
		{reason: "the kubeconfig came, the runtime is configured", from: lc.StatePending, fromReason: lc.ReasonWaitingForKubeconfig,
			to: lc.StatePending, toReason: lc.ReasonConfiguringRuntime},
		{reason: "a problem cleared, provisioning goes on", from: lc.StatePending, fromReason: lc.ReasonRuntimeAPIServerUnreachable,
			to: lc.StatePending, toReason: lc.ReasonWaitingForGardener},
		{reason: "nothing changed", from: lc.StatePending, fromReason: lc.ReasonGardenerRetryScheduled, to: lc.StatePending,
			toReason: lc.ReasonGardenerRetryScheduled},
		{reason: "Ready", from: lc.StatePending, fromReason: lc.ReasonWaitingForKubeconfig, to: lc.StateReady, toReason: lc.ReasonReady, want: true},
		{reason: "a new Runtime is Ready at once (adopted)", from: "", to: lc.StateReady, toReason: lc.ReasonReady, want: true},
		{reason: "an update leaves Ready", from: lc.StateReady, fromReason: lc.ReasonReady, to: lc.StatePending, toReason: lc.ReasonUpdatingShoot, want: true},
		{reason: "a new Runtime is invalid", from: "", to: lc.StateFailed, toReason: lc.ReasonSpecInvalid, want: true},
		{reason: "a failed Runtime recovers", from: lc.StateFailed, fromReason: lc.ReasonGardenerFailed, to: lc.StatePending,
			toReason: lc.ReasonWaitingForGardener, want: true},
		{reason: "Gardener failed, a retry is scheduled", from: lc.StatePending, fromReason: lc.ReasonWaitingForGardener,
			to: lc.StatePending, toReason: lc.ReasonGardenerRetryScheduled, want: true},
		{reason: "the runtime does not answer", from: lc.StatePending, fromReason: lc.ReasonConfiguringRuntime,
			to: lc.StatePending, toReason: lc.ReasonRuntimeAPIServerUnreachable, want: true},
		{reason: "a new Runtime waits for deletions to resume", from: "", to: lc.StatePending, toReason: lc.ReasonDeletionsFrozen, want: true},
		{reason: "a failure changes its reason", from: lc.StateFailed, fromReason: lc.ReasonGardenerFailed, to: lc.StateFailed,
			toReason: lc.ReasonShootRejected, want: true},
		{reason: "taking a shoot over is rare and keeps its event", from: "", to: lc.StatePending, toReason: lc.ReasonAdoptingShoot, want: true},
	}
	for _, tc := range cases {
		d := lc.Decision{State: tc.to, Reason: tc.toReason}
		if got := lc.StateChangeEvent(tc.from, tc.fromReason, d); got != tc.want {
			t.Errorf("%s: event %v, want %v", tc.reason, got, tc.want)
		}
	}
}
