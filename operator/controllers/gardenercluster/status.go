package gardenercluster

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Reasons of the KubeconfigManagement condition and of events. They are part of the API: people and alerts match
// on them, so they never change.
const (
	// ReasonSecretCreated: the first kubeconfig was written to a new Secret.
	ReasonSecretCreated = "KubeconfigSecretCreated"
	// ReasonSecretRotated: a new kubeconfig replaced the one in the Secret. It stays until the next write or failure.
	ReasonSecretRotated = "KubeconfigSecretRotated"
	// ReasonSecretValid: a valid Secret written before (by an earlier operator) was found; nothing had to be issued.
	ReasonSecretValid = "KubeconfigSecretValid"
	// ReasonFailedToGetKubeconfig: Gardener did not issue a kubeconfig; the message carries Gardener's error.
	ReasonFailedToGetKubeconfig = "FailedToGetKubeconfig"
	// ReasonWaitingForShoot: no kubeconfig was issued yet because Gardener is still creating the shoot (or it does
	// not exist yet); expected while a runtime is provisioned, retried without a warning.
	ReasonWaitingForShoot = "WaitingForShoot"
	// ReasonFailedToWriteSecret: the kubeconfig could not be written to the Secret.
	ReasonFailedToWriteSecret = "FailedToWriteSecret"
	// ReasonFailedToDeleteSecret: the Secret of a deleted GardenerCluster could not be removed.
	ReasonFailedToDeleteSecret = "FailedToDeleteSecret"
	// ReasonSecretDeleted: the Secret of a deleted GardenerCluster was removed (event only).
	ReasonSecretDeleted = "KubeconfigSecretDeleted"
)

// setCondition sets the KubeconfigManagement condition and the state derived from it.
func setCondition(gc *imv1.GardenerCluster, state imv1.GardenerClusterState, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&gc.Status.Conditions, metav1.Condition{
		Type:               imv1.ConditionKubeconfigManagement,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: gc.Generation,
	})
	gc.Status.State = state
	if state == imv1.GardenerClusterStateReady {
		gc.Status.ObservedGeneration = gc.Generation
	}
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
}

// markValid records that the Secret is fine without a write: an existing successful condition is kept as it is
// (its reason tells what last happened), only the state and observedGeneration follow.
func markValid(gc *imv1.GardenerCluster, msg string) {
	if !succeeded(gc) {
		setCondition(gc, imv1.GardenerClusterStateReady, metav1.ConditionTrue, ReasonSecretValid, msg)
		return
	}
	cond := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
	cond.ObservedGeneration = gc.Generation
	gc.Status.State = imv1.GardenerClusterStateReady
	gc.Status.ObservedGeneration = gc.Generation
	setReady(gc)
}

// succeeded reports whether the status records a successful kubeconfig write or check (condition True).
func succeeded(gc *imv1.GardenerCluster) bool {
	cond := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
	return cond != nil && cond.Status == metav1.ConditionTrue
}

func statusChanged(before, after *imv1.GardenerCluster) bool {
	return !equality.Semantic.DeepEqual(before.Status, after.Status)
}
