package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// IdentityDeletion is the outcome of one Delete.
type IdentityDeletion struct {
	// Release: the finalizer may come off.
	Release      bool
	Message      string
	RequeueAfter time.Duration
	Events       []Event
}

// Delete removes what req created: its objects in the runtime (the ServiceAccount last, which invalidates every
// token issued for it) and its kubeconfig Secret. A runtime without admin kubeconfig lets go at once, an
// unreachable one after the cleanup timeout since started (the deletion timestamp); both say what was left behind,
// unless st says the request never held anything there.
func (u *IdentityKubeconfigs) Delete(ctx context.Context, req sakubeconfig.Request, st IdentityState, started, now time.Time) (IdentityDeletion, error) {
	u.roleChecks.Delete(req.Owner)
	timeout := u.CleanupTimeout
	if timeout <= 0 {
		timeout = sakubeconfig.DefaultCleanupTimeout
	}
	// An attempt against a runtime that hangs ends at the cleanup deadline, so the deletion lets go at its timeout
	// and not one request timeout and one retry later.
	deadline := started.Add(timeout)
	attempt, cancel := ctx, context.CancelFunc(func() {})
	if now.Before(deadline) {
		attempt, cancel = context.WithTimeout(ctx, deadline.Sub(now))
	}
	defer cancel()
	var cleanup sakubeconfig.Cleanup
	gone, err := u.Runtimes.Remove(attempt, runtimeOf(req), req.Owner)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(attempt.Err(), context.DeadlineExceeded):
		cleanup, now = sakubeconfig.CleanupUnreachable, deadline
	case errors.Is(err, ports.ErrNoRuntimeKubeconfig):
		cleanup = sakubeconfig.CleanupNoAccess
	case errors.Is(err, ports.ErrRuntimeUnreachable) || errors.Is(err, ports.ErrTransient):
		cleanup = sakubeconfig.CleanupUnreachable
	case err != nil:
		return IdentityDeletion{Message: err.Error()}, fmt.Errorf("remove runtime objects of %s: %w", req.Owner, err)
	case !gone:
		cleanup = sakubeconfig.CleanupPending
	}
	d := sakubeconfig.OnDelete(cleanup, started, now, timeout)
	out := IdentityDeletion{Message: d.Message, RequeueAfter: d.RetryAfter}
	if err != nil {
		out.Message += ": " + err.Error()
	}
	if !d.Release {
		return out, nil
	}
	if removed, err := u.removeSecret(ctx, req); err != nil || !removed {
		out.RequeueAfter = 2 * time.Second
		return out, err
	}
	out.Release = true
	if d.LeftBehind && !st.Held && cleanup == sakubeconfig.CleanupNoAccess {
		out.Message = "the runtime's admin kubeconfig is gone and the request held nothing there"
		out.Events = append(out.Events, Event{Reason: sakubeconfig.EventRuntimeObjectsRemoved,
			Message: fmt.Sprintf("ServiceAccount %s was never created in runtime %s; Secret %s deleted", req.ServiceAccount, req.RuntimeID, req.SecretName)})
		return out, nil
	}
	if d.LeftBehind {
		out.Events = append(out.Events, Event{Warning: true, Reason: sakubeconfig.EventRuntimeObjectsLeftBehind,
			Message: fmt.Sprintf("ServiceAccount %s in runtime %s: %s; Secret %s deleted", req.ServiceAccount, req.RuntimeID, out.Message, req.SecretName)})
	} else {
		out.Events = append(out.Events, Event{Reason: sakubeconfig.EventRuntimeObjectsRemoved,
			Message: fmt.Sprintf("ServiceAccount %s, its roles and bindings removed from runtime %s; Secret %s deleted", req.ServiceAccount, req.RuntimeID, req.SecretName)})
	}
	return out, nil
}

// removeSecret deletes the request's Secret if it is the request's, and reports whether it is observed gone. A
// Secret of someone else is left alone (and counts as gone: it is not ours to remove).
func (u *IdentityKubeconfigs) removeSecret(ctx context.Context, req sakubeconfig.Request) (bool, error) {
	sec, err := u.observe(ctx, req, ports.ReadLive)
	switch {
	case errors.Is(err, sakubeconfig.ErrSecretNotOwned) || (err == nil && sec.verdict == sakubeconfig.SecretAbsent):
		return true, nil
	case err != nil:
		return false, err
	}
	if err := u.Secrets.Delete(ctx, secretOf(req), ports.Precondition{UID: sec.md.UID}); err != nil {
		return false, fmt.Errorf("delete kubeconfig secret %s: %w", secretOf(req), err)
	}
	_, err = u.Secrets.ReadMetadata(ctx, secretOf(req), ports.ReadLive)
	if errors.Is(err, ports.ErrSecretNotFound) {
		return true, nil
	}
	return false, err
}
