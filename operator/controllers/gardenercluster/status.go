package gardenercluster

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// result writes the domain's status into the GardenerCluster and turns the rest into the skeleton's result.
func result(gc *imv1.GardenerCluster, st kubeconfig.Status) skeleton.Result {
	state := imv1.GardenerClusterState(st.State)
	if skeleton.SetCondition(&gc.Status.Conditions, imv1.ConditionKubeconfigManagement, gc.Generation,
		skeleton.Outcome{OK: st.OK, Reason: string(st.Reason), Message: st.Message, Keep: st.Keep}) {
		// The reason of the recorded success tells what last happened: only the state and generation follow.
		state = imv1.GardenerClusterStateReady
	}
	setState(gc, state)
	out := skeleton.Result{RequeueAfter: st.RequeueAfter}
	if st.Event {
		out.Events = []skeleton.Event{{Warning: st.Warning, Reason: string(st.Reason), Action: st.Action, Message: st.Message}}
	}
	if st.Retry {
		out.Retry = errors.New(st.Message)
	}
	return out
}

// setState sets the state that goes with the KubeconfigManagement condition, and the conditions derived from both.
func setState(gc *imv1.GardenerCluster, state imv1.GardenerClusterState) {
	gc.Status.State = state
	// Every write describes the current spec, a failed one too: kstatus reads a status whose observedGeneration
	// is behind as in progress, which would hide a failure.
	gc.Status.ObservedGeneration = gc.Generation
	setReady(gc)
}

// setReady derives the Ready condition (the kstatus convention `kubectl wait --for=condition=Ready` relies on) from
// the state and the KubeconfigManagement condition: True in state Ready, otherwise False with the same reason and
// message, so `kubectl get gc -o wide` shows why.
func setReady(gc *imv1.GardenerCluster) {
	status := metav1.ConditionFalse
	if gc.Status.State == imv1.GardenerClusterStateReady {
		status = metav1.ConditionTrue
	}
	ready := metav1.Condition{Type: imv1.ConditionReady, Status: status, ObservedGeneration: gc.Generation,
		Reason: "Unknown", Message: "no kubeconfig operation recorded yet"}
	if kc := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement); kc != nil {
		ready.Reason, ready.Message = kc.Reason, kc.Message
	}
	meta.SetStatusCondition(&gc.Status.Conditions, ready)
	setKStatus(gc, ready)
}

// setKStatus sets kstatus' abnormal-true conditions (sigs.k8s.io/cli-utils, what Flux, Argo CD and kpt health checks
// run) with Ready's reason and message: Reconciling while the kubeconfig is on its way (Pending), Stalled when the
// last attempt failed (Error), neither when Ready or Deleting (a deletion is Terminating by its timestamp). Only a
// condition that applies is kept, as kstatus expects.
func setKStatus(gc *imv1.GardenerCluster, ready metav1.Condition) {
	skeleton.SetKStatus(&gc.Status.Conditions, gc.Generation, gc.Status.State == imv1.GardenerClusterStatePending,
		gc.Status.State == imv1.GardenerClusterStateError, ready.Reason, ready.Message, time.Time{})
}

// succeeded reports whether the status records a successful kubeconfig write or check (condition True).
func succeeded(gc *imv1.GardenerCluster) bool {
	cond := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
	return cond != nil && cond.Status == metav1.ConditionTrue
}
