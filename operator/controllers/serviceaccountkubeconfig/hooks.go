package serviceaccountkubeconfig

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// hooks are the ServiceAccountKubeconfig controller's part of the skeleton: CR <-> least-privilege kubeconfig use
// case.
type hooks struct {
	identities *usecase.IdentityKubeconfigs
	metrics    *Metrics
}

type state = skeleton.State[*imv1.ServiceAccountKubeconfig]

// observed is what the use case decides on: the request and what the status records of earlier work.
type observed struct {
	req sakubeconfig.Request
	st  usecase.IdentityState
}

// LogValues implements skeleton.LogKeys.
func (h *hooks) LogValues(s *imv1.ServiceAccountKubeconfig) []any {
	return []any{"runtimeID", s.Spec.RuntimeID, "serviceAccount", s.Spec.ServiceAccount.Namespace + "/" + s.Spec.ServiceAccount.Name}
}

// Observe implements skeleton.Hooks.
func (h *hooks) Observe(s *state) observed {
	return observed{req: Request(s.Obj), st: State(s.Obj)}
}

// Act implements skeleton.Hooks. The use case confirms with the API server (live) before it calls the runtime.
func (h *hooks) Act(ctx context.Context, s *state, q observed, now time.Time) (usecase.IdentityResult, error) {
	return h.identities.Reconcile(ctx, q.req, q.st, now, live(s))
}

// Status implements skeleton.Hooks. A failure is written too (the skeleton retries it with backoff afterwards).
func (h *hooks) Status(_ context.Context, s *state, res usecase.IdentityResult, err error, _ time.Time) skeleton.Result {
	setStatus(s.Obj, res)
	h.metrics.observe(s.Obj)
	out := skeleton.Result{RequeueAfter: res.RequeueAfter, Events: h.events(res.Events)}
	if err == nil && res.ClearForce {
		out.ClearAnnotations = []string{imv1.AnnotationForceKubeconfigRotation}
	}
	return out
}

// Finalize implements skeleton.FinalizeHandler: what the object created in the runtime and its Secret go first, then the
// finalizer; a runtime that is gone or does not answer within the cleanup timeout lets it go too, with a warning
// naming what was left behind.
func (h *hooks) Finalize(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	sak := s.Obj
	res, err := h.identities.Delete(ctx, Request(sak), State(sak), sak.DeletionTimestamp.Time, now)
	ctrl.LoggerFrom(ctx).Info("deletion step", "release", res.Release, "message", res.Message)
	out := skeleton.Result{RequeueAfter: res.RequeueAfter, Events: h.events(res.Events), Release: res.Release && err == nil}
	if !res.Release {
		setNotReady(sak, imv1.ServiceAccountKubeconfigStateDeleting, reasonDeleting, res.Message)
	}
	if out.Release {
		h.metrics.forget(sak.Namespace, sak.Name)
	}
	return out, err
}

// Gone implements skeleton.GoneHandler: the series of a deleted object go.
func (h *hooks) Gone(_ context.Context, s *state, _ time.Time) (skeleton.Result, error) {
	h.metrics.forget(s.Key().Namespace, s.Key().Name)
	return skeleton.Result{}, nil
}

// events counts the use case's events and returns them for the skeleton to record on the object and log.
// Messages never carry a token.
func (h *hooks) events(evs []usecase.Event) []skeleton.Event {
	for _, e := range evs {
		h.metrics.Events.WithLabelValues(e.Reason).Inc()
	}
	return evs
}

// live confirms the reconcile's object with the API server by rebasing the reconcile on it: the live object
// becomes both the one the status is written to and the baseline of the status patch, so the patch carries only
// what this reconcile changes.
func live(s *state) usecase.LiveRequest {
	return func(ctx context.Context) (sakubeconfig.Request, usecase.IdentityState, bool, error) {
		exists, err := s.Rebase(ctx)
		if err != nil {
			return sakubeconfig.Request{}, usecase.IdentityState{}, false, fmt.Errorf("confirm ServiceAccountKubeconfig %s: %w", s.Key(), err)
		}
		if !exists || !s.Obj.DeletionTimestamp.IsZero() {
			return sakubeconfig.Request{}, usecase.IdentityState{}, false, nil
		}
		return Request(s.Obj), State(s.Obj), true, nil
	}
}
