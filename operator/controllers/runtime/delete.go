package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// accessRemovalRecheck is how soon a deleting Runtime looks again while its GardenerCluster finalizer runs.
const accessRemovalRecheck = 2 * time.Second

// reconcileDelete removes access, marks (and hibernates) the shoot, then lets the Runtime go (issue 7).
func (r *Reconciler) reconcileDelete(ctx context.Context, rt *imv1.Runtime) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(rt, Finalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	if rt.Status.State != imv1.RuntimeStateTerminating {
		before := rt.DeepCopy()
		rt.Status.State = imv1.RuntimeStateTerminating
		if err := r.Client.Status().Patch(ctx, rt, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patch status of runtime %s: %w", rt.Name, err)
		}
		r.Recorder.Eventf(rt, "Normal", "Deleting", "Removing access and marking shoot %s for deletion", rt.Spec.Shoot.Name)
	}
	gone, err := r.Access.Remove(ctx, rt.Namespace, rt.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	s, err := r.Shoots.Get(ctx, rt.Spec.Shoot.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	in := deletion.RuntimeInput{RuntimeID: rt.Name, Plan: rt.Labels[imv1.LabelBrokerPlanName],
		EverReady: rt.Status.ProvisioningCompleted, AccessRemoved: gone, Shoot: s}
	for range 3 {
		d := deletion.OnRuntimeDeleted(in, r.Policy, now)
		log.Info("runtime deletion step", "action", d.Action, "message", d.Message)
		switch d.Action {
		case deletion.ActionRemoveAccess:
			return ctrl.Result{RequeueAfter: accessRemovalRecheck}, nil
		case deletion.ActionMarkShoot:
			doc, err := restoreDocument(rt)
			if err != nil {
				return ctrl.Result{}, err
			}
			marked, err := r.Shoots.MarkForDeletion(ctx, s.Name, ports.DeletionMark{Record: *d.Record, Hibernate: d.Hibernate, RestoreSpec: doc})
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("mark shoot %s for deletion: %w", s.Name, err)
			}
			r.Metrics.pendingDeletion.Inc()
			r.Recorder.Eventf(rt, "Normal", "ShootMarkedForDeletion", "%s", d.Message)
			in.Shoot = marked
		case deletion.ActionRelease:
			controllerutil.RemoveFinalizer(rt, Finalizer)
			if err := r.Client.Update(ctx, rt); err != nil {
				return ctrl.Result{}, fmt.Errorf("remove finalizer of runtime %s: %w", rt.Name, err)
			}
			r.Metrics.SetRuntime(rt.Namespace+"/"+rt.Name, "", "")
			return ctrl.Result{}, nil
		}
	}
	return ctrl.Result{}, fmt.Errorf("deletion of runtime %s did not converge", rt.Name)
}

// restoreDocument is the Runtime as it can be created again: identity, labels, spec; no status or server fields.
func restoreDocument(rt *imv1.Runtime) ([]byte, error) {
	doc := imv1.Runtime{
		TypeMeta:   metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime"},
		ObjectMeta: metav1.ObjectMeta{Name: rt.Name, Namespace: rt.Namespace, Labels: rt.Labels},
		Spec:       rt.Spec,
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode restore document of runtime %s: %w", rt.Name, err)
	}
	return raw, nil
}
