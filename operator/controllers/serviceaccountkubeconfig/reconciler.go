package serviceaccountkubeconfig

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Finalizer keeps a ServiceAccountKubeconfig until its runtime objects and Secret are removed (or the runtime is
// gone, or did not answer within the cleanup timeout).
const Finalizer = "infrastructuremanager.kyma-project.io/serviceaccountkubeconfig"

// RBAC in KCP: the objects are only patched (finalizer, force annotation), never updated; kubeconfig Secrets are
// created, applied and deleted, admin kubeconfig Secrets read (markers of the GardenerCluster controller grant
// both); events use the events.k8s.io API. Nothing is granted in runtimes: the admin kubeconfig is used there.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=serviceaccountkubeconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=serviceaccountkubeconfigs/status,verbs=get;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch

// Reconciler reconciles one ServiceAccountKubeconfig. It holds no state between reconciles except metrics.
type Reconciler struct {
	// Client reads from the cache and writes; LiveReader confirms before the runtime is called and before the
	// finalizer comes off.
	Client     client.Client
	LiveReader client.Reader
	UseCase    *usecase.IdentityKubeconfigs
	Clock      ports.Clock
	Recorder   events.EventRecorder
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sak := &imv1.ServiceAccountKubeconfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, sak); err != nil {
		if apierrors.IsNotFound(err) {
			forget(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get ServiceAccountKubeconfig %s: %w", req, err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("runtimeID", sak.Spec.RuntimeID,
		"serviceAccount", sak.Spec.ServiceAccount.Namespace+"/"+sak.Spec.ServiceAccount.Name))
	if !sak.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, sak)
	}
	if err := skeleton.EnsureFinalizer(ctx, r.Client, sak, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	before := sak.DeepCopy()
	res, err := r.UseCase.Reconcile(ctx, Request(sak), State(sak), r.Clock.Now(), r.live(sak, before))
	r.record(ctx, sak, res.Events)
	if err == nil && res.ClearForce {
		err = skeleton.ClearAnnotation(ctx, r.Client, sak, imv1.AnnotationForceKubeconfigRotation)
	}
	setStatus(sak, res)
	observe(sak)
	if perr := r.patchStatus(ctx, sak, before); perr != nil {
		err = errors.Join(err, perr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
}

// live re-reads the object from the API server for the use case. The baseline of the status patch becomes the live
// object too, so the patch carries only what this reconcile changes.
func (r *Reconciler) live(sak, before *imv1.ServiceAccountKubeconfig) usecase.LiveRequest {
	return func(ctx context.Context) (sakubeconfig.Request, usecase.IdentityState, bool, error) {
		cur := &imv1.ServiceAccountKubeconfig{}
		err := r.LiveReader.Get(ctx, client.ObjectKeyFromObject(sak), cur)
		if apierrors.IsNotFound(err) {
			return sakubeconfig.Request{}, usecase.IdentityState{}, false, nil
		}
		if err != nil {
			return sakubeconfig.Request{}, usecase.IdentityState{}, false, fmt.Errorf("confirm ServiceAccountKubeconfig %s/%s: %w", sak.Namespace, sak.Name, err)
		}
		if !cur.DeletionTimestamp.IsZero() {
			return sakubeconfig.Request{}, usecase.IdentityState{}, false, nil
		}
		cur.DeepCopyInto(sak)
		cur.DeepCopyInto(before)
		return Request(cur), State(cur), true, nil
	}
}

func (r *Reconciler) patchStatus(ctx context.Context, sak, before *imv1.ServiceAccountKubeconfig) error {
	if !statusChanged(before, sak) {
		return nil
	}
	// A merge patch of the status carries no resourceVersion: it cannot conflict with writers of other fields.
	if err := r.Client.Status().Patch(ctx, sak, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch status of ServiceAccountKubeconfig %s/%s: %w", sak.Namespace, sak.Name, err)
	}
	return nil
}

// finalize removes what the object created and lets it go when the use case says so.
func (r *Reconciler) finalize(ctx context.Context, sak *imv1.ServiceAccountKubeconfig) (ctrl.Result, error) {
	if !slices.Contains(sak.Finalizers, Finalizer) {
		return ctrl.Result{}, nil
	}
	before := sak.DeepCopy()
	res, err := r.UseCase.Delete(ctx, Request(sak), State(sak), sak.DeletionTimestamp.Time, r.Clock.Now())
	r.record(ctx, sak, res.Events)
	ctrl.LoggerFrom(ctx).Info("deletion step", "release", res.Release, "message", res.Message)
	if !res.Release {
		setCondition(sak, imv1.ServiceAccountKubeconfigStateDeleting, metav1.ConditionFalse, reasonDeleting, res.Message)
		if perr := r.patchStatus(ctx, sak, before); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !res.Release {
		return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
	}
	if err := skeleton.RemoveFinalizer(ctx, r.Client, r.LiveReader, sak, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	forget(sak.Namespace, sak.Name)
	return ctrl.Result{}, nil
}

// record turns the use case's events into Kubernetes events, a counter and log lines. Messages never carry a token.
func (r *Reconciler) record(ctx context.Context, sak *imv1.ServiceAccountKubeconfig, evs []usecase.Event) {
	for _, e := range evs {
		kind := "Normal"
		if e.Warning {
			kind = "Warning"
		}
		r.Recorder.Eventf(sak, nil, kind, e.Reason, e.Reason, "%s", e.Message)
		Events.WithLabelValues(e.Reason).Inc()
		ctrl.LoggerFrom(ctx).Info("event", "reason", e.Reason, "message", e.Message)
	}
}
