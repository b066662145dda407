package gardenercluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// hooks are the GardenerCluster controller's part of the skeleton: CR <-> rotation use case.
type hooks struct {
	rotator *usecase.Rotator
	metrics *Metrics
}

type state = skeleton.State[*imv1.GardenerCluster]

// LogValues implements skeleton.LogKeys.
func (h *hooks) LogValues(gc *imv1.GardenerCluster) []any {
	return []any{"runtimeID", gc.Name, "shoot", gc.Spec.Shoot.Name}
}

// Observe implements skeleton.Hooks.
func (h *hooks) Observe(s *state) ports.KubeconfigRequest {
	return request(s.Obj)
}

// Act implements skeleton.Hooks.
func (h *hooks) Act(ctx context.Context, s *state, req ports.KubeconfigRequest, now time.Time) (usecase.RotationResult, error) {
	return h.rotator.Rotate(ctx, req, live{s}, now)
}

// Status implements skeleton.Hooks.
func (h *hooks) Status(ctx context.Context, s *state, res usecase.RotationResult, err error, _ time.Time) skeleton.Result {
	if res.Gone || err != nil {
		return skeleton.Result{}
	}
	gc, log := s.Obj, ctrl.LoggerFrom(ctx)
	if res.Requested {
		log.Info("kubeconfig requested", "trigger", res.Decision.Trigger, "why", res.Decision.Detail, "written", res.Written)
		if errors.Is(res.RequestErr, ports.ErrForbidden) {
			log.Error(res.RequestErr, "Gardener refused the admin kubeconfig; check the operator's Gardener credentials")
		}
	}
	if !res.ExpiresAt.IsZero() {
		h.metrics.ExpirationTimestamp.WithLabelValues(gc.Name, gc.Spec.Shoot.Name).Set(float64(res.ExpiresAt.Unix()))
	}
	if res.Written && res.Decision.Trigger.Rotation() {
		h.metrics.Rotations.WithLabelValues(triggerLabel(res.Decision.Trigger)).Inc()
	}
	out := result(gc, res.Status)
	if res.ClearForce {
		out.ClearAnnotations = []string{imv1.AnnotationForceKubeconfigRotation}
	}
	return out
}

// Finalize implements skeleton.Hooks: the Secrets the GardenerCluster owns go first, then the finalizer. It also
// runs when the GardenerCluster was deleted while the operator was down: the finalizer kept it.
func (h *hooks) Finalize(ctx context.Context, s *state, _ time.Time) (skeleton.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	res, err := h.rotator.Remove(ctx, request(s.Obj))
	if err != nil {
		return skeleton.Result{}, err
	}
	var out skeleton.Result
	for _, ref := range res.Kept {
		log.Info("the named Secret is not this GardenerCluster's; it is kept", "secret", ref.String())
	}
	for _, ref := range res.Deleted {
		out.Events = append(out.Events, skeleton.Event{Reason: string(kubeconfig.ReasonSecretDeleted), Action: "DeleteSecret",
			Message: "kubeconfig Secret " + ref.String() + " deleted"})
	}
	switch {
	case res.Status != nil:
		failed := result(s.Obj, *res.Status)
		failed.Events = append(out.Events, failed.Events...)
		return failed, nil
	case res.StillThere != nil:
		log.Info("kubeconfig Secret still being removed", "secret", res.StillThere.String())
		out.RequeueAfter = kubeconfig.RetrySecretGone
	case res.Release:
		h.metrics.forget(s.Obj.Name)
		log.Info("kubeconfig Secrets deleted, finalizer removed")
		out.Release = true
	}
	return out, nil
}

// Gone implements skeleton.GoneHandler: the Secrets of a GardenerCluster deleted without the finalizer go too.
func (h *hooks) Gone(ctx context.Context, s *state, _ time.Time) (skeleton.Result, error) {
	key := s.Key()
	h.metrics.forget(key.Name)
	deleted, err := h.rotator.RemoveOrphans(ctx, key.Namespace, key.Name, live{s})
	for _, ref := range deleted {
		ctrl.LoggerFrom(ctx).Info("deleted kubeconfig Secret of a GardenerCluster that no longer exists", "runtimeID", key.Name,
			"secret", ref.Namespace+"/"+ref.Name)
	}
	return skeleton.Result{}, err
}

// request maps a GardenerCluster to what it asks of kubeconfig management.
func request(gc *imv1.GardenerCluster) ports.KubeconfigRequest {
	sec := gc.Spec.Kubeconfig.Secret
	return ports.KubeconfigRequest{Namespace: gc.Namespace, Name: gc.Name, Labels: gc.Labels, Shoot: gc.Spec.Shoot.Name,
		Secret:   ports.SecretRef{Namespace: sec.Namespace, Name: sec.Name, Key: sec.Key},
		Force:    gc.Annotations[imv1.AnnotationForceKubeconfigRotation] == "true",
		Deleting: !gc.DeletionTimestamp.IsZero(),
		History: kubeconfig.History{Succeeded: succeeded(gc),
			Issued: gc.Status.State != "" && gc.Status.State != imv1.GardenerClusterStatePending}}
}

// live confirms a GardenerCluster with the API server. The reconcile's own GardenerCluster is confirmed by rebasing
// the reconcile on it: the live object becomes both the one the status is written to and the baseline of the status
// patch. Any other is read live.
type live struct{ s *state }

// Live returns the controller's implementation of ports.KubeconfigRequests for the reconcile s.
func Live(s *skeleton.State[*imv1.GardenerCluster]) ports.KubeconfigRequests { return live{s} }

// Confirm implements ports.KubeconfigRequests.
func (l live) Confirm(ctx context.Context, namespace, name string) (ports.KubeconfigRequest, bool, error) {
	if key := l.s.Key(); key.Namespace != namespace || key.Name != name {
		var gc imv1.GardenerCluster
		err := l.s.Live().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &gc)
		if apierrors.IsNotFound(err) {
			return ports.KubeconfigRequest{}, false, nil
		}
		if err != nil {
			return ports.KubeconfigRequest{}, false, fmt.Errorf("read gardener cluster %s/%s: %w: %w", namespace, name, ports.ErrTransient, err)
		}
		return request(&gc), true, nil
	}
	exists, err := l.s.Rebase(ctx)
	if err != nil {
		return ports.KubeconfigRequest{}, false, fmt.Errorf("%w: %w", ports.ErrTransient, err)
	}
	if !exists {
		return ports.KubeconfigRequest{}, false, nil
	}
	return request(l.s.Obj), true, nil
}
