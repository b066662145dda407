package kubeconfig

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestStatusOfOutcomes(t *testing.T) {
	now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		reason string
		got    Status
		want   Status
	}{
		{reason: "first kubeconfig: created, event, requeue at the rotation point",
			got:  Issued(Decision{Issue: true, Trigger: TriggerInitial}, "ns/s:config", now.Add(24*time.Hour), now.Add(15*time.Hour), now),
			want: Status{State: StateReady, OK: true, Reason: ReasonSecretCreated, Event: true, Action: "WriteSecret", RequeueAfter: 15 * time.Hour}},
		{reason: "a replaced kubeconfig is a rotation",
			got:  Issued(Decision{Issue: true, Trigger: TriggerForced}, "ns/s:config", now.Add(24*time.Hour), now, now),
			want: Status{State: StateReady, OK: true, Reason: ReasonSecretRotated, Event: true, Action: "WriteSecret", RequeueAfter: time.Second}},
		{reason: "valid with a recorded success: the condition stays, no event",
			got:  Valid(Decision{RotateAt: now.Add(time.Hour), Detail: "valid until tomorrow"}, History{Issued: true, Succeeded: true}, now),
			want: Status{State: StateReady, OK: true, Reason: ReasonSecretValid, Keep: true, RequeueAfter: time.Hour}},
		{reason: "shoot not ready for a cluster that never had a kubeconfig: waiting, no warning",
			got:  NotIssued(FailureShootNotReady, History{}, "c-1", "no address"),
			want: Status{State: StatePending, Reason: ReasonWaitingForShoot, Event: true, Action: "IssueKubeconfig", RequeueAfter: RetryShootNotReady}},
		{reason: "shoot not found for a cluster that had one: an error",
			got:  NotIssued(FailureShootNotFound, History{Issued: true}, "c-1", "gone"),
			want: Status{State: StateError, Reason: ReasonFailedToGetKubeconfig, Event: true, Warning: true, Action: "IssueKubeconfig", RequeueAfter: RetryShootNotFound}},
		{reason: "forbidden: slow retry",
			got:  NotIssued(FailureForbidden, History{}, "c-1", "no"),
			want: Status{State: StateError, Reason: ReasonFailedToGetKubeconfig, Event: true, Warning: true, Action: "IssueKubeconfig", RequeueAfter: RetryForbidden}},
		{reason: "transient: retried with backoff",
			got:  NotIssued(FailureTransient, History{}, "c-1", "timeout"),
			want: Status{State: StateError, Reason: ReasonFailedToGetKubeconfig, Event: true, Warning: true, Action: "IssueKubeconfig", Retry: true}},
		{reason: "a foreign Secret is refused for good",
			got:  Refused(fmt.Errorf("%w: x", ErrSecretNotOwned)),
			want: Status{State: StateError, Reason: ReasonSecretNotOwned, Event: true, Warning: true, Action: "CheckOwnership", RequeueAfter: RetryRefused}},
		{reason: "a Secret in another namespace has its own reason",
			got:  Refused(fmt.Errorf("%w: x", ErrSecretOtherNamespace)),
			want: Status{State: StateError, Reason: ReasonSecretNamespace, Event: true, Warning: true, Action: "CheckOwnership", RequeueAfter: RetryRefused}},
		{reason: "a deleted runtime's shoot is not of this runtime",
			got:  Refused(fmt.Errorf("%w: x", ErrShootPendingDeletion)),
			want: Status{State: StateError, Reason: ReasonShootNotOfRuntime, Event: true, Warning: true, Action: "CheckOwnership", RequeueAfter: RetryRefused}},
		{reason: "a failed write is retried",
			got:  WriteFailed("ns/s:config", "etcd full"),
			want: Status{State: StateError, Reason: ReasonFailedToWriteSecret, Event: true, Warning: true, Action: "WriteSecret", Retry: true}},
		{reason: "a failed deletion keeps Deleting and is retried",
			got:  DeleteFailed("ns/s:config", "forbidden"),
			want: Status{State: StateDeleting, Reason: ReasonFailedToDeleteSecret, Event: true, Warning: true, Action: "DeleteSecret", Retry: true}},
	}
	for _, tc := range cases {
		got := tc.got
		if got.Message == "" {
			t.Errorf("%s: no message", tc.reason)
		}
		got.Message = ""
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.reason, got, tc.want)
		}
	}
}

func TestRefusalTellsRefusalsFromFailures(t *testing.T) {
	for _, err := range []error{ErrSecretOtherNamespace, ErrSecretNotOwned, ErrShootOfAnotherRuntime, ErrShootPendingDeletion} {
		if !Refusal(fmt.Errorf("wrapped: %w", err)) {
			t.Errorf("%v is a refusal", err)
		}
	}
	if Refusal(errors.New("read secret: connection refused")) {
		t.Error("a failure to read is no refusal")
	}
}
