package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
	"github.com/kyma-project/kim/operator/mapping"
)

// Finalizer keeps a Runtime until its access is removed and its shoot is marked for deletion.
const Finalizer = "infrastructuremanager.kyma-project.io/runtime"

// conditionRuntimeConfigured is the condition earlier versions of the operator recorded the configured generation
// in; status.runtimeConfiguration replaced it and it is removed.
const conditionRuntimeConfigured = "RuntimeConfigured"

// Reconciler reconciles one Runtime: it maps the CR to the provisioning and teardown use cases and their results
// to status, events and metrics. It holds no state between reconciles except metrics.
type Reconciler struct {
	// Client reads Runtimes from the cache and writes them; LiveReader confirms before removing the finalizer.
	Client     client.Client
	LiveReader client.Reader
	Provision  *usecase.Provisioner
	Teardown   *usecase.Teardown
	Clock      ports.Clock
	Recorder   events.EventRecorder
	Metrics    *Metrics
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rt := &imv1.Runtime{}
	if err := r.Client.Get(ctx, req.NamespacedName, rt); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.SetRuntime(req.String(), "", "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get runtime %s: %w", req, err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("runtimeID", rt.Name, "shoot", rt.Spec.Shoot.Name))
	if !rt.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, rt)
	}
	if err := skeleton.EnsureFinalizer(ctx, r.Client, rt, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	before := rt.DeepCopy()
	now := r.Clock.Now()
	res, err := r.Provision.Provision(ctx, provisionRequest(rt), now)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.record(ctx, rt, res.Events)
	if res.ClearForcePatch {
		if err := skeleton.ClearAnnotation(ctx, r.Client, rt, imv1.AnnotationForcePatchReconciliation); err != nil {
			return ctrl.Result{}, err
		}
	}
	d := res.Decision
	if d.Transient {
		ctrl.LoggerFrom(ctx).Info("action failed", "step", d.Step, "reason", d.Reason, "message", d.Message)
	}
	setStatus(rt, res, now)
	if err := r.Client.Status().Patch(ctx, rt, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("patch status of runtime %s: %w", rt.Name, err)
	}
	r.report(rt, before, d, now)
	if d.Transient {
		return ctrl.Result{}, errors.New(d.Message)
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// provisionRequest maps a Runtime to the provisioning use case. The runtime ID is the Runtime's name: the name is
// what the shoot, the GardenerCluster and the Secret are keyed by, whatever a label says.
func provisionRequest(rt *imv1.Runtime) usecase.RuntimeRequest {
	domain := mapping.Runtime(rt)
	domain.ID = rt.Name
	req := usecase.RuntimeRequest{Runtime: domain, Namespace: rt.Namespace, UID: string(rt.UID), Labels: rt.Labels,
		Plan:         rt.Labels[imv1.LabelBrokerPlanName],
		SuspendPatch: rt.Annotations[imv1.AnnotationSuspendPatchReconciliation] == "true",
		ForcePatch:   rt.Annotations[imv1.AnnotationForcePatchReconciliation] == "true",
		InstanceID:   rt.Labels[imv1.LabelInstanceID], InstanceName: rt.Labels[imv1.LabelKymaName]}
	if rc := rt.Status.RuntimeConfiguration; rc != nil {
		req.Configured = usecase.RecordedConfiguration{Hash: rc.Hash, AppliedAt: timeOf(rc.AppliedAt), ShootReconciledAt: timeOf(rc.ShootReconciledAt)}
	}
	return req
}

// reconcileDelete runs the teardown use case and lets the Runtime go when it says so.
func (r *Reconciler) reconcileDelete(ctx context.Context, rt *imv1.Runtime) (ctrl.Result, error) {
	if !containsFinalizer(rt) {
		return ctrl.Result{}, nil
	}
	if rt.Status.State != imv1.RuntimeStateTerminating {
		before := rt.DeepCopy()
		rt.Status.State = imv1.RuntimeStateTerminating
		if err := r.Client.Status().Patch(ctx, rt, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patch status of runtime %s: %w", rt.Name, err)
		}
		r.Recorder.Eventf(rt, nil, "Normal", "Deleting", "Teardown", "Removing access and marking shoot %s for deletion", rt.Spec.Shoot.Name)
	}
	doc, err := kube.RestoreDocument(rt)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.Teardown.Run(ctx, usecase.TeardownRequest{RuntimeID: rt.Name, Namespace: rt.Namespace, ShootName: rt.Spec.Shoot.Name,
		Plan: rt.Labels[imv1.LabelBrokerPlanName], EverReady: rt.Status.ProvisioningCompleted, RestoreDocument: doc}, r.Clock.Now())
	r.record(ctx, rt, res.Events)
	ctrl.LoggerFrom(ctx).Info("runtime deletion step", "release", res.Release, "message", res.Message)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !res.Release {
		return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
	}
	if err := skeleton.RemoveFinalizer(ctx, r.Client, r.LiveReader, rt, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	r.Metrics.SetRuntime(rt.Namespace+"/"+rt.Name, "", "")
	return ctrl.Result{}, nil
}

func containsFinalizer(rt *imv1.Runtime) bool { return slices.Contains(rt.Finalizers, Finalizer) }

// record turns the use case's events into Kubernetes events and counters.
func (r *Reconciler) record(ctx context.Context, rt *imv1.Runtime, evs []usecase.Event) {
	for _, e := range evs {
		kind := "Normal"
		if e.Warning {
			kind = "Warning"
		}
		r.Recorder.Eventf(rt, nil, kind, e.Reason, e.Reason, "%s", e.Message)
		r.Metrics.count(e.Reason)
		ctrl.LoggerFrom(ctx).Info("event", "reason", e.Reason, "message", e.Message)
	}
}
