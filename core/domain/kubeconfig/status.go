package kubeconfig

import (
	"errors"
	"fmt"
	"time"
)

// State is the coarse state of a GardenerCluster (status.state).
type State string

// States of a GardenerCluster.
const (
	StatePending  State = "Pending"
	StateReady    State = "Ready"
	StateError    State = "Error"
	StateDeleting State = "Deleting"
)

// Reason is the stable reason of the KubeconfigManagement condition and of events. Values never change meaning:
// people and alerts match on them.
type Reason string

// Reasons of kubeconfig management.
const (
	// ReasonSecretCreated: the first kubeconfig was written to a new Secret.
	ReasonSecretCreated Reason = "KubeconfigSecretCreated"
	// ReasonSecretRotated: a new kubeconfig replaced the one in the Secret. It stays until the next write or failure.
	ReasonSecretRotated Reason = "KubeconfigSecretRotated"
	// ReasonSecretValid: a valid Secret written before (by an earlier operator) was found; nothing had to be issued.
	ReasonSecretValid Reason = "KubeconfigSecretValid"
	// ReasonFailedToGetKubeconfig: Gardener did not issue a kubeconfig; the message carries Gardener's error.
	ReasonFailedToGetKubeconfig Reason = "FailedToGetKubeconfig"
	// ReasonWaitingForShoot: no kubeconfig was issued yet because Gardener is still creating the shoot (or it does
	// not exist yet); expected while a runtime is provisioned, retried without a warning.
	ReasonWaitingForShoot Reason = "WaitingForShoot"
	// ReasonFailedToWriteSecret: the kubeconfig could not be written to the Secret.
	ReasonFailedToWriteSecret Reason = "FailedToWriteSecret"
	// ReasonFailedToDeleteSecret: the Secret of a deleted GardenerCluster could not be removed.
	ReasonFailedToDeleteSecret Reason = "FailedToDeleteSecret"
	// ReasonSecretDeleted: the Secret of a deleted GardenerCluster was removed (event only).
	ReasonSecretDeleted Reason = "KubeconfigSecretDeleted"
	// ReasonSecretNotOwned: the named Secret exists and belongs to someone else; it is left byte-identical.
	ReasonSecretNotOwned Reason = "SecretNotOwned"
	// ReasonSecretNamespace: the named Secret is in another namespace than the GardenerCluster.
	ReasonSecretNamespace Reason = "SecretInOtherNamespace"
	// ReasonSecretName: the named Secret does not exist and is not kubeconfig-<name of the GardenerCluster>, the
	// only Secret a GardenerCluster may create.
	ReasonSecretName Reason = "SecretNameNotAllowed"
	// ReasonShootNotOfRuntime: the named shoot belongs to another runtime, or to a deleted one.
	ReasonShootNotOfRuntime Reason = "ShootNotOfRuntime"
)

// Failure classifies why Gardener did not issue a kubeconfig.
type Failure int

// Failures of a kubeconfig request.
const (
	// FailureTransient: the request failed on the way; retrying soon helps.
	FailureTransient Failure = iota
	// FailureShootNotReady: the shoot exists but cannot have a kubeconfig yet.
	FailureShootNotReady
	// FailureShootNotFound: the shoot does not exist (yet).
	FailureShootNotFound
	// FailureForbidden: the operator's Gardener credentials may not request kubeconfigs.
	FailureForbidden
)

// Retry intervals after Gardener refused a kubeconfig for a reason a quick retry does not fix, and after a
// refusal only a person can lift. Transient failures are retried with the controller's backoff instead.
const (
	RetryShootNotReady = 30 * time.Second
	RetryShootNotFound = time.Minute
	RetryForbidden     = 5 * time.Minute
	// RetryRefused: how often a refused GardenerCluster is looked at again without an event (a person may have
	// fixed the Secret; changes of the GardenerCluster itself trigger at once).
	RetryRefused = 10 * time.Minute
	// RetrySecretGone: how soon a deletion is looked at again while the Secret is still being removed.
	RetrySecretGone = 2 * time.Second
)

// History is what a GardenerCluster's status records of earlier passes.
type History struct {
	// Issued is true once a kubeconfig was written or found (the state is neither empty nor Pending).
	Issued bool
	// Succeeded is true when the recorded outcome is a success (the KubeconfigManagement condition is True).
	Succeeded bool
}

// Status is what a GardenerCluster's status says after one pass, and what follows.
type Status struct {
	State State
	// OK is the KubeconfigManagement condition's status.
	OK      bool
	Reason  Reason
	Message string
	// Keep leaves a recorded successful condition as it is (its reason tells what last happened): only the state
	// and the observed generation follow.
	Keep bool
	// Event says that the outcome is worth an event (Warning: a warning), recorded with Action.
	Event, Warning bool
	Action         string
	// RequeueAfter asks to look again after this long without an event.
	RequeueAfter time.Duration
	// Retry asks for a rate-limited retry (repeating soon can help).
	Retry bool
}

// Issued is the status after a kubeconfig was issued for d and written to secret.
func Issued(d Decision, secret string, expires, rotateAt, now time.Time) Status {
	reason, verb := ReasonSecretCreated, "created"
	if d.Trigger.Rotation() {
		reason, verb = ReasonSecretRotated, "rotated"
	}
	return Status{State: StateReady, OK: true, Reason: reason, Event: true, Action: "WriteSecret",
		Message:      fmt.Sprintf("kubeconfig Secret %s %s (%s), valid until %s", secret, verb, d.Trigger, FormatTime(expires)),
		RequeueAfter: requeueAt(rotateAt, now)}
}

// Valid is the status when the recorded kubeconfig is fine and nothing was issued: a recorded success stays as it
// is, otherwise the Secret written before is reported valid.
func Valid(d Decision, h History, now time.Time) Status {
	return Status{State: StateReady, OK: true, Reason: ReasonSecretValid, Message: d.Detail, Keep: h.Succeeded,
		RequeueAfter: requeueAt(d.RotateAt, now)}
}

// NotIssued is the status after Gardener did not issue a kubeconfig for shoot. A shoot that is not there or not
// ready yet, for a cluster that never had a kubeconfig, is the normal course of provisioning (KEB creates the
// GardenerCluster together with the Runtime), not an error.
func NotIssued(f Failure, h History, shoot, cause string) Status {
	st := Status{State: StateError, Reason: ReasonFailedToGetKubeconfig, Event: true, Warning: true, Action: "IssueKubeconfig",
		Message: fmt.Sprintf("Gardener did not issue a kubeconfig for shoot %s: %s", shoot, cause)}
	if !h.Issued && (f == FailureShootNotReady || f == FailureShootNotFound) {
		st.State, st.Reason, st.Warning = StatePending, ReasonWaitingForShoot, false
	}
	switch f {
	case FailureShootNotReady:
		st.RequeueAfter = RetryShootNotReady
	case FailureShootNotFound:
		st.RequeueAfter = RetryShootNotFound
	case FailureForbidden:
		st.RequeueAfter = RetryForbidden
	default:
		st.Retry = true
	}
	return st
}

// WriteFailed is the status when the issued kubeconfig could not be written to secret.
func WriteFailed(secret, cause string) Status {
	return Status{State: StateError, Reason: ReasonFailedToWriteSecret, Event: true, Warning: true, Action: "WriteSecret",
		Message: fmt.Sprintf("writing the kubeconfig to Secret %s failed: %s", secret, cause), Retry: true}
}

// DeleteFailed is the status when the Secret of a GardenerCluster being deleted could not be removed.
func DeleteFailed(secret, cause string) Status {
	return Status{State: StateDeleting, Reason: ReasonFailedToDeleteSecret, Event: true, Warning: true, Action: "DeleteSecret",
		Message: fmt.Sprintf("deleting kubeconfig Secret %s failed: %s", secret, cause), Retry: true}
}

// Refusal reports whether err is a refusal of the ownership checks (CheckClusterSecret, CheckShoot), as opposed to a
// failure to read.
func Refusal(err error) bool {
	for _, e := range []error{ErrSecretOtherNamespace, ErrSecretNotOwned, ErrSecretName, ErrShootOfAnotherRuntime, ErrShootPendingDeletion} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Refused is the status of a GardenerCluster that asks for something the operator refuses (err is a Refusal). It
// is an error of the cluster, not of the reconcile: repeating cannot help until a person changes the
// GardenerCluster or the Secret.
func Refused(err error) Status {
	reason := ReasonSecretNotOwned
	switch {
	case errors.Is(err, ErrSecretOtherNamespace):
		reason = ReasonSecretNamespace
	case errors.Is(err, ErrSecretName):
		reason = ReasonSecretName
	case errors.Is(err, ErrShootOfAnotherRuntime), errors.Is(err, ErrShootPendingDeletion):
		reason = ReasonShootNotOfRuntime
	}
	return Status{State: StateError, Reason: reason, Event: true, Warning: true, Action: "CheckOwnership", RequeueAfter: RetryRefused,
		Message: fmt.Sprintf("No kubeconfig is written: %v. Fix spec.kubeconfig.secret or spec.shoot.name of this GardenerCluster.", err)}
}

// requeueAt is the delay until t, at least a second so a rotation point that just passed does not spin.
func requeueAt(t, now time.Time) time.Duration {
	return max(t.Sub(now), time.Second)
}
