package usecase

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// IdentityKubeconfigs issues least-privilege kubeconfigs: for a ServiceAccountKubeconfig it keeps a ServiceAccount
// with exactly the requested permissions in the runtime and a kubeconfig with a short-lived token of it in a KCP
// Secret, rotated like admin kubeconfigs. Without a due token and without a spec change it makes no call to the
// runtime at all, so a restart costs the runtimes nothing.
type IdentityKubeconfigs struct {
	Runtimes ports.RuntimeIdentities
	Secrets  ports.IdentityKubeconfigStore
	// Access is the landscape's part of the no-escalation policy.
	Access sakubeconfig.AccessPolicy
	// RotationFraction is the admin kubeconfigs' (kubeconfig.Policy): a token is replaced after this share of its
	// lifetime, jittered per request.
	RotationFraction float64
	// CleanupTimeout bounds how long a deletion waits for an unreachable runtime (0: the domain's default).
	CleanupTimeout time.Duration
	// RoleRecheckInterval is how often a bound ClusterRole is read again while nothing else calls the runtime
	// (0: 10 minutes): a role that grew into escalation revokes the request within it, whatever the token's
	// rotation schedule.
	RoleRecheckInterval time.Duration

	// roleChecks holds per Owner the time its bound ClusterRole was last found allowed (time.Time). In memory
	// only: after a restart each request's first check is due at a point of the interval derived from its owner,
	// so a restart spreads the reads instead of calling every runtime at once.
	roleChecks sync.Map
}

// IdentityState is what the owner's status says about earlier work.
type IdentityState struct {
	// Applied: the runtime objects of the request's generation are in place (observedGeneration is the generation
	// and the request was Ready).
	Applied bool
	// Held: the status lists runtime objects, so the runtime may hold some.
	Held bool
}

// LiveRequest re-reads the request and its state from the API server (ok false when it is gone or being deleted).
// It is asked before the runtime is: the cache may still show a force annotation that was already cleared, or not
// yet the status that records the last apply.
type LiveRequest func(ctx context.Context) (req sakubeconfig.Request, st IdentityState, ok bool, err error)

// IdentityResult is the outcome of one Reconcile, for the owner's status.
type IdentityResult struct {
	Ready           bool
	Reason, Message string
	// Observed: the result describes the request's generation (record it as observedGeneration).
	Observed bool
	// Objects are the runtime objects the request holds now, when ObjectsChanged.
	Objects        []sakubeconfig.ObjectRef
	ObjectsChanged bool
	// ExpiresAt is the expiry of the kubeconfig in the Secret (zero when unknown).
	ExpiresAt time.Time
	// ClearForce: a forced token was issued; remove the force annotation.
	ClearForce   bool
	RequeueAfter time.Duration
	Events       []Event
}

// Retry intervals for outcomes a quick retry does not change. Other failures are returned as errors and retried
// with the controller's backoff.
const (
	identityWaitRuntime  = 30 * time.Second
	identityWaitRole     = time.Minute
	identityWaitClash    = 5 * time.Minute
	identityRecheckRoles = 10 * time.Minute
)

func runtimeOf(req sakubeconfig.Request) ports.RuntimeRef {
	return ports.RuntimeRef{Namespace: req.Owner.Namespace, RuntimeID: req.RuntimeID}
}

func secretOf(req sakubeconfig.Request) ports.SecretRef {
	return ports.SecretRef{Namespace: req.Owner.Namespace, Name: req.SecretName, Key: sakubeconfig.SecretKey}
}

// secretState is one observation of the request's Secret.
type secretState struct {
	md      ports.KubeconfigSecretMetadata
	verdict sakubeconfig.SecretVerdict
	rec     sakubeconfig.Recorded
}

func (u *IdentityKubeconfigs) observe(ctx context.Context, req sakubeconfig.Request, mode ports.ReadMode) (secretState, error) {
	md, err := u.Secrets.ReadMetadata(ctx, secretOf(req), mode)
	exists := err == nil
	if err != nil && !errors.Is(err, ports.ErrSecretNotFound) {
		return secretState{}, fmt.Errorf("read kubeconfig secret %s: %w", secretOf(req), err)
	}
	s := secretState{md: md, rec: sakubeconfig.RecordedFrom(exists, md.HasKubeconfig, md.Annotations)}
	s.verdict, err = sakubeconfig.CheckRequestSecret(req.Owner, req.SecretName, exists, md.Annotations)
	return s, err
}

// Reconcile brings the runtime and the Secret to what req asks for at now. It decides on the cache first; only
// when the runtime must be called does it confirm with live (may be nil) and decide again.
func (u *IdentityKubeconfigs) Reconcile(ctx context.Context, req sakubeconfig.Request, st IdentityState, now time.Time, live LiveRequest) (IdentityResult, error) {
	o, res, err := u.decide(ctx, req, st, now, ports.ReadCached)
	if o == nil {
		return res, err
	}
	if live != nil {
		// Confirm with the API server before calling the runtime, so one rotation never becomes two and a status
		// written a moment ago does not cause a second apply.
		cur, curSt, ok, err := live(ctx)
		if err != nil || !ok {
			return IdentityResult{}, err
		}
		req, st = cur, curSt
		if o, res, err = u.decide(ctx, req, st, now, ports.ReadLive); o == nil {
			return res, err
		}
	}
	if o.recheckRole {
		return u.recheckRole(ctx, req, st, o, now)
	}
	res, err = u.apply(ctx, req, st, now)
	// A refusal of the bound ClusterRole also changes the objects (it revokes them) and comes back with its reason:
	// it is the final result, never a step towards issuing a token.
	if err != nil || !res.ObjectsChanged || res.Reason != "" {
		return res, err
	}
	d := o.decision
	if !d.Issue {
		res.Ready, res.Reason, res.ExpiresAt = true, sakubeconfig.ReasonRulesApplied, d.ExpiresAt
		res.Message = fmt.Sprintf("rules applied to ServiceAccount %s in runtime %s; %s", req.ServiceAccount, req.RuntimeID, d.Detail)
		res.Events = append(res.Events, Event{Reason: sakubeconfig.ReasonRulesApplied, Message: res.Message})
		res.RequeueAfter = u.requeue(req, d.RotateAt, now)
		return res, nil
	}
	return u.issue(ctx, req, o, now, res)
}

// decision is what Reconcile decided before calling the runtime.
type decision struct {
	sec      secretState
	endpoint sakubeconfig.Endpoint
	policy   kubeconfig.Policy
	decision kubeconfig.Decision
	// recheckRole: nothing is due but the periodic check of the bound ClusterRole.
	recheckRole bool
}

// decide checks the request and its Secret and applies the rotation policy. It returns nil and the final result
// when the runtime need not (or must not) be called.
func (u *IdentityKubeconfigs) decide(ctx context.Context, req sakubeconfig.Request, st IdentityState, now time.Time, mode ports.ReadMode) (*decision, IdentityResult, error) {
	if err := u.Access.CheckRequest(req); err != nil {
		res, err := u.refuse(ctx, req, st, err)
		return nil, res, err
	}
	o := &decision{}
	var err error
	o.sec, err = u.observe(ctx, req, mode)
	if errors.Is(err, sakubeconfig.ErrSecretNotOwned) {
		return nil, IdentityResult{Reason: sakubeconfig.ReasonSecretNotOwned, Message: err.Error(), Observed: true, RequeueAfter: identityWaitClash}, nil
	}
	if err != nil {
		return nil, IdentityResult{}, err
	}
	o.endpoint, err = u.Runtimes.Endpoint(ctx, runtimeOf(req))
	if res, done := runtimeProblem(req, err); done {
		return nil, res, nil
	} else if err != nil {
		return nil, IdentityResult{}, err
	}
	if o.policy, err = kubeconfig.NewPolicy(req.Validity, u.RotationFraction); err != nil {
		return nil, IdentityResult{Reason: sakubeconfig.ReasonInvalidRequest, Message: err.Error(), Observed: true}, nil
	}
	d := sakubeconfig.Rotation(o.policy, now, req.Owner, o.sec.rec, req.Force, o.endpoint)
	o.decision = d
	if !d.Issue && st.Applied {
		if req.ClusterRole != nil && !u.nextRoleCheck(req.Owner, now).After(now) {
			o.recheckRole = true
			return o, IdentityResult{}, nil
		}
		return nil, IdentityResult{Ready: true, Reason: sakubeconfig.ReasonKubeconfigValid, Message: d.Detail, Observed: true, ExpiresAt: d.ExpiresAt,
			RequeueAfter: u.requeue(req, d.RotateAt, now)}, nil
	}
	return o, IdentityResult{}, nil
}

// runtimeProblem maps the runtime failures a quick retry does not fix to a result (done true).
func runtimeProblem(req sakubeconfig.Request, err error) (IdentityResult, bool) {
	switch {
	case err == nil:
		return IdentityResult{}, false
	case errors.Is(err, ports.ErrNoRuntimeKubeconfig):
		return IdentityResult{Reason: sakubeconfig.ReasonWaitingForRuntime, RequeueAfter: identityWaitRuntime,
			Message: fmt.Sprintf("waiting for the admin kubeconfig of runtime %s: Secret %s/kubeconfig-%s does not hold one yet (the GardenerCluster of the runtime writes it once the cluster is ready)",
				req.RuntimeID, req.Owner.Namespace, req.RuntimeID)}, true
	case errors.Is(err, ports.ErrRuntimeUnreachable):
		return IdentityResult{Reason: sakubeconfig.ReasonRuntimeUnreachable, RequeueAfter: identityWaitRuntime,
			Message: fmt.Sprintf("runtime %s did not answer: %v", req.RuntimeID, err)}, true
	case errors.Is(err, ports.ErrRuntimeObjectNotOwned):
		return IdentityResult{Reason: sakubeconfig.ReasonObjectNotOwned, Observed: true, RequeueAfter: identityWaitClash,
			Message: fmt.Sprintf("%v: delete or rename it in runtime %s, or choose another ServiceAccount", err, req.RuntimeID)}, true
	case errors.Is(err, ports.ErrClusterRoleNotFound):
		return IdentityResult{Reason: sakubeconfig.ReasonClusterRoleNotFound, RequeueAfter: identityWaitRole,
			Message: fmt.Sprintf("runtime %s has no ClusterRole %s: %v", req.RuntimeID, req.ClusterRole.Name, err)}, true
	}
	return IdentityResult{}, false
}

// apply checks a bound ClusterRole against the policy and applies the request's objects to the runtime. A refusal
// or a runtime problem comes back as the result (ObjectsChanged false).
func (u *IdentityKubeconfigs) apply(ctx context.Context, req sakubeconfig.Request, st IdentityState, now time.Time) (IdentityResult, error) {
	rt := runtimeOf(req)
	var role *sakubeconfig.ClusterRole
	if req.ClusterRole != nil {
		r, res, done, err := u.checkRole(ctx, req, st, now)
		if done {
			return res, err
		}
		role = &r
	}
	objs := sakubeconfig.Desired(req)
	claims := u.Access.NamespaceClaims(req, role)
	objs.Claimed = sakubeconfig.ClaimedNamespaces(claims)
	err := u.Runtimes.Apply(ctx, rt, objs)
	if nc := (*sakubeconfig.NamespaceNotCreatedError)(nil); errors.As(err, &nc) {
		// A claimed namespace is not the request's: refused like an escalating rule, and what the request held
		// (an earlier generation's objects) is revoked.
		return u.refuse(ctx, req, st, sakubeconfig.RefuseClaim(claims, nc))
	}
	if res, done := runtimeProblem(req, err); done {
		return res, nil
	} else if err != nil {
		return IdentityResult{Reason: sakubeconfig.ReasonApplyFailed, Message: fmt.Sprintf("applying the runtime objects failed: %v", err)},
			fmt.Errorf("apply runtime objects of %s: %w", req.Owner, err)
	}
	return IdentityResult{Observed: true, Objects: objs.Refs(), ObjectsChanged: true}, nil
}

// checkRole reads the bound ClusterRole and judges it (done true: res is the final result, a refusal or a runtime
// problem). A role found allowed is recorded as checked at now.
func (u *IdentityKubeconfigs) checkRole(ctx context.Context, req sakubeconfig.Request, st IdentityState, now time.Time) (sakubeconfig.ClusterRole, IdentityResult, bool, error) {
	role, err := u.Runtimes.ClusterRole(ctx, runtimeOf(req), req.ClusterRole.Name)
	if res, done := runtimeProblem(req, err); done {
		return role, res, true, nil
	} else if err != nil {
		return role, IdentityResult{Reason: sakubeconfig.ReasonApplyFailed, Message: err.Error()}, true, fmt.Errorf("read ClusterRole %s: %w", req.ClusterRole.Name, err)
	}
	if err := u.Access.CheckClusterRole(req, role); err != nil {
		u.roleChecks.Delete(req.Owner)
		res, rerr := u.refuse(ctx, req, st, err)
		if res.RequeueAfter == 0 {
			res.RequeueAfter = u.roleInterval() // the runtime's ClusterRole may change
		}
		return role, res, true, rerr
	}
	u.roleChecks.Store(req.Owner, now)
	return role, IdentityResult{}, false, nil
}

// recheckRole is the periodic check of a bound ClusterRole when nothing else is due: a role that grew into
// escalation (or became aggregated) is refused like a request, and the request loses what it holds (its
// ServiceAccount with every token, roles, bindings, Secret); one that is still allowed changes nothing.
func (u *IdentityKubeconfigs) recheckRole(ctx context.Context, req sakubeconfig.Request, st IdentityState, o *decision, now time.Time) (IdentityResult, error) {
	role, res, done, err := u.checkRole(ctx, req, st, now)
	if done {
		return res, err
	}
	d := o.decision
	out := IdentityResult{Ready: true, Reason: sakubeconfig.ReasonKubeconfigValid, Message: d.Detail, Observed: true, ExpiresAt: d.ExpiresAt}
	if len(u.Access.NamespaceClaims(req, &role)) > 0 {
		// The role reaches Secrets or workloads in the namespaces it is bound in (it may have grown into them):
		// only the runtime knows whether each is the request's, and Apply asks it before it writes anything.
		res, err := u.apply(ctx, req, st, now)
		if err != nil || res.Reason != "" {
			return res, err
		}
		out.Objects, out.ObjectsChanged = res.Objects, res.ObjectsChanged
	}
	out.RequeueAfter = u.requeue(req, d.RotateAt, now)
	return out, nil
}

func (u *IdentityKubeconfigs) roleInterval() time.Duration {
	if u.RoleRecheckInterval > 0 {
		return u.RoleRecheckInterval
	}
	return identityRecheckRoles
}

// nextRoleCheck is when the bound ClusterRole of owner is due to be read again.
func (u *IdentityKubeconfigs) nextRoleCheck(owner sakubeconfig.Owner, now time.Time) time.Time {
	interval := u.roleInterval()
	h := fnv.New64a()
	_, _ = h.Write([]byte(owner.String()))
	phase := time.Duration(h.Sum64() % uint64(interval)) //nolint:gosec // G115: interval is positive (roleInterval)
	last, _ := u.roleChecks.LoadOrStore(owner, now.Add(phase-interval))
	return last.(time.Time).Add(interval)
}

// requeue is when req must be looked at again: at rotateAt, or earlier for the next check of its bound ClusterRole.
func (u *IdentityKubeconfigs) requeue(req sakubeconfig.Request, rotateAt, now time.Time) time.Duration {
	if req.ClusterRole != nil {
		if next := u.nextRoleCheck(req.Owner, now); next.Before(rotateAt) {
			return until(next, now)
		}
	}
	return until(rotateAt, now)
}
