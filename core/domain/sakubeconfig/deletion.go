package sakubeconfig

import (
	"fmt"
	"time"
)

// DefaultCleanupTimeout bounds how long a deletion waits for an unreachable runtime before it lets go.
const DefaultCleanupTimeout = 5 * time.Minute

// Cleanup is what removing a request's runtime objects achieved.
type Cleanup int

// Outcomes of a cleanup attempt.
const (
	// CleanupDone: no object of the request is left in the runtime.
	CleanupDone Cleanup = iota
	// CleanupPending: deletes were sent; some objects are still there.
	CleanupPending
	// CleanupNoAccess: the runtime's admin kubeconfig is gone (the runtime was deleted, or never provisioned):
	// nothing can be removed, now or later.
	CleanupNoAccess
	// CleanupUnreachable: the runtime's API server did not answer (or failed).
	CleanupUnreachable
)

// DeletionDecision says whether the request may let go of its finalizer.
type DeletionDecision struct {
	Release bool
	// LeftBehind is true when the request lets go without having removed its objects (say so).
	LeftBehind bool
	// RetryAfter is when to try again when not released.
	RetryAfter time.Duration
	Message    string
}

// OnDelete decides after a cleanup attempt at now, for a deletion that began at started. A runtime without access
// lets go at once; an unreachable one is retried until timeout has passed since started, then let go: a deleted
// ServiceAccountKubeconfig must not hang because its runtime is down. Its tokens expire on their own.
func OnDelete(c Cleanup, started, now time.Time, timeout time.Duration) DeletionDecision {
	switch c {
	case CleanupDone:
		return DeletionDecision{Release: true, Message: "runtime objects removed"}
	case CleanupPending:
		return DeletionDecision{RetryAfter: 2 * time.Second, Message: "runtime objects are being removed"}
	case CleanupNoAccess:
		return DeletionDecision{Release: true, LeftBehind: true,
			Message: "the runtime's admin kubeconfig is gone (runtime deleted?): nothing was removed in the runtime"}
	}
	if deadline := started.Add(timeout); now.Before(deadline) {
		return DeletionDecision{RetryAfter: min(15*time.Second, deadline.Sub(now)),
			Message: fmt.Sprintf("the runtime did not answer; retrying until %s, then the objects are left behind", deadline.UTC().Format(time.RFC3339))}
	}
	return DeletionDecision{Release: true, LeftBehind: true,
		Message: fmt.Sprintf("the runtime did not answer for %s: its objects are left behind (issued tokens expire on their own)", timeout)}
}
