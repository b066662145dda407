package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// issue requests a token, renders the kubeconfig and writes it in one request.
func (u *IdentityKubeconfigs) issue(ctx context.Context, req sakubeconfig.Request, o *decision, now time.Time, res IdentityResult) (IdentityResult, error) {
	d, ep := o.decision, o.endpoint
	tok, err := u.Runtimes.IssueToken(ctx, runtimeOf(req), req.ServiceAccount, req.Validity)
	if r, done := runtimeProblem(req, err); done {
		r.Objects, r.ObjectsChanged, r.Observed = res.Objects, true, true
		return r, nil
	} else if err != nil {
		res.Reason, res.Message = sakubeconfig.ReasonTokenRequestFailed, fmt.Sprintf("the runtime refused the TokenRequest for %s: %v", req.ServiceAccount, err)
		res.Events = append(res.Events, Event{Warning: true, Reason: sakubeconfig.ReasonTokenRequestFailed, Message: res.Message})
		return res, fmt.Errorf("token for %s: %w", req.ServiceAccount, err)
	}
	issued := sakubeconfig.Issued{RuntimeID: req.RuntimeID, ServiceAccount: req.ServiceAccount, Endpoint: ep, IssuedAt: now, ExpiresAt: tok.ExpiresAt}
	s := ports.IdentityKubeconfigSecret{Ref: secretOf(req), Labels: sakubeconfig.SecretLabels(req.Owner),
		Annotations: sakubeconfig.SecretAnnotations(req.Owner, issued),
		Kubeconfig:  sakubeconfig.Render(ep, req.RuntimeID, req.ServiceAccount, tok.Token)}
	if err := u.write(ctx, req, o.sec, s); errors.Is(err, sakubeconfig.ErrSecretNotOwned) {
		res.Reason, res.Message, res.RequeueAfter = sakubeconfig.ReasonSecretNotOwned, err.Error(), identityWaitClash
		return res, nil
	} else if err != nil {
		res.Reason, res.Message = sakubeconfig.ReasonSecretWriteFailed, fmt.Sprintf("writing the kubeconfig to Secret %s failed: %v", s.Ref, err)
		res.Events = append(res.Events, Event{Warning: true, Reason: sakubeconfig.ReasonSecretWriteFailed, Message: res.Message})
		return res, fmt.Errorf("write kubeconfig secret: %w", err)
	}
	res.Ready, res.Reason, res.ExpiresAt, res.ClearForce = true, sakubeconfig.ReasonKubeconfigIssued, tok.ExpiresAt, req.Force
	verb := "issued"
	if d.Trigger.Rotation() {
		res.Reason, verb = sakubeconfig.ReasonKubeconfigRotated, "rotated"
	}
	res.Message = fmt.Sprintf("kubeconfig of %s in runtime %s %s (%s) into Secret %s, valid until %s", req.ServiceAccount, req.RuntimeID,
		verb, d.Trigger, s.Ref.Name, kubeconfig.FormatTime(tok.ExpiresAt))
	res.Events = append(res.Events, Event{Reason: res.Reason, Message: res.Message})
	res.RequeueAfter = u.requeue(req, o.policy.RotateAt(req.Owner.String(), now, tok.ExpiresAt), now)
	return res, nil
}

// write stores the kubeconfig in the Secret that was checked: a create when it did not exist, otherwise pinned to
// the checked version. When someone changed the Secret meanwhile it is read and checked again and the same
// kubeconfig written: the runtime is not asked for a second token.
func (u *IdentityKubeconfigs) write(ctx context.Context, req sakubeconfig.Request, sec secretState, s ports.IdentityKubeconfigSecret) error {
	for attempt := 0; ; attempt++ {
		s.ExpectAbsent = sec.verdict == sakubeconfig.SecretAbsent
		s.Precondition = ports.Precondition{UID: sec.md.UID, ResourceVersion: sec.md.ResourceVersion}
		err := u.Secrets.Write(ctx, s)
		if !errors.Is(err, ports.ErrConflict) || attempt == 2 {
			return err
		}
		if sec, err = u.observe(ctx, req, ports.ReadLive); err != nil {
			return err
		}
	}
}

// refuse records a refusal. A request that held something (its policy or the landscape's changed since) loses it:
// a refused request keeps no permissions in the runtime and no kubeconfig.
func (u *IdentityKubeconfigs) refuse(ctx context.Context, req sakubeconfig.Request, st IdentityState, refusal error) (IdentityResult, error) {
	res := IdentityResult{Reason: sakubeconfig.ReasonEscalationRefused, Message: refusal.Error(), Observed: true}
	if errors.Is(refusal, sakubeconfig.ErrInvalid) {
		res.Reason = sakubeconfig.ReasonInvalidRequest
	}
	res.Events = []Event{{Warning: true, Reason: res.Reason, Message: res.Message}}
	sec, err := u.observe(ctx, req, ports.ReadCached)
	ownSecret := err == nil && sec.verdict == sakubeconfig.SecretOwned
	if !st.Held && !ownSecret {
		return res, nil
	}
	gone, err := u.Runtimes.Remove(ctx, runtimeOf(req), req.Owner)
	switch {
	case errors.Is(err, ports.ErrNoRuntimeKubeconfig):
	case err != nil:
		return res, fmt.Errorf("revoke the access of refused %s: %w", req.Owner, err)
	case !gone:
		res.RequeueAfter = 2 * time.Second
		return res, nil
	}
	if ownSecret {
		if err := u.Secrets.Delete(ctx, secretOf(req), ports.Precondition{UID: sec.md.UID}); err != nil {
			return res, fmt.Errorf("delete the kubeconfig of refused %s: %w", req.Owner, err)
		}
	}
	res.Objects, res.ObjectsChanged = []sakubeconfig.ObjectRef{}, true
	res.Events = append(res.Events, Event{Warning: true, Reason: sakubeconfig.EventAccessRevoked,
		Message: fmt.Sprintf("ServiceAccount %s, its roles and bindings were removed from runtime %s and Secret %s deleted: the request is refused",
			req.ServiceAccount, req.RuntimeID, req.SecretName)})
	return res, nil
}

// until is the delay until t, at least a second so a point that just passed does not spin.
func until(t, now time.Time) time.Duration { return max(t.Sub(now), time.Second) }
