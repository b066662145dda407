package gardenercluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestReadyConditionFollowsState: every status write keeps a Ready condition (what `kubectl wait
// --for=condition=Ready gardenercluster/<id>` and kstatus read) that is True exactly in state Ready and carries the
// reason and message of KubeconfigManagement.
func TestReadyConditionFollowsState(t *testing.T) {
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	steps := []struct {
		reason     string
		apply      func()
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"waiting for the shoot", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StatePending, Reason: kubeconfig.ReasonWaitingForShoot, Message: "shoot not ready"})
		}, metav1.ConditionFalse, string(kubeconfig.ReasonWaitingForShoot)},
		{"first kubeconfig written", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateReady, OK: true, Reason: kubeconfig.ReasonSecretCreated, Message: "written"})
		}, metav1.ConditionTrue, string(kubeconfig.ReasonSecretCreated)},
		{"a later check finds it valid (reason of the last write stays)", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateReady, OK: true, Reason: kubeconfig.ReasonSecretValid, Message: "still valid", Keep: true})
		},
			metav1.ConditionTrue, string(kubeconfig.ReasonSecretCreated)},
		{"rotation fails", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateError, Reason: kubeconfig.ReasonFailedToGetKubeconfig, Message: "gardener says no"})
		}, metav1.ConditionFalse, string(kubeconfig.ReasonFailedToGetKubeconfig)},
		{"deleting", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateDeleting, Reason: kubeconfig.ReasonFailedToDeleteSecret, Message: "forbidden"})
		}, metav1.ConditionFalse, string(kubeconfig.ReasonFailedToDeleteSecret)},
	}
	for _, s := range steps {
		s.apply()
		ready := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionReady)
		if ready == nil {
			t.Fatalf("%s: no Ready condition", s.reason)
		}
		kc := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
		if ready.Status != s.wantStatus || ready.Reason != s.wantReason || ready.Message != kc.Message || ready.ObservedGeneration != 3 {
			t.Errorf("%s: Ready %s/%s %q (generation %d), want %s/%s %q (generation 3)",
				s.reason, ready.Status, ready.Reason, ready.Message, ready.ObservedGeneration, s.wantStatus, s.wantReason, kc.Message)
		}
	}
}
