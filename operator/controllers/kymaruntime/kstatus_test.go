package kymaruntime

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestKStatusOfTheRuntimeStatus: kstatus (what Flux, Argo CD and kpt health checks run) reads the status the
// controller writes as KEB's states mean them, across a sequence Pending -> Failed -> Pending -> Ready: a Failed
// Runtime is Failed instead of Current, a Pending one InProgress, a Ready one Current, and a Ready one keeps no
// Reconciling or Stalled condition from before.
func TestKStatusOfTheRuntimeStatus(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	rt := &imv1.Runtime{TypeMeta: metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime"},
		ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", Generation: 2}}
	for _, step := range []struct {
		state  lifecycle.State
		reason lifecycle.Reason
		want   status.Status
	}{
		{lifecycle.StatePending, "WaitingForGardener", status.InProgressStatus},
		{lifecycle.StateFailed, "ShootCreationFailed", status.FailedStatus},
		{lifecycle.StatePending, "", status.InProgressStatus}, // a reason is still set: the API requires one
		{lifecycle.StateReady, "Provisioned", status.CurrentStatus},
	} {
		setStatus(rt, usecase.ProvisionResult{Decision: lifecycle.Decision{State: step.state, Reason: step.reason, Message: "m"}}, now)
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := status.Compute(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != step.want {
			t.Errorf("state %s: kstatus %s (%s); want %s", step.state, res.Status, res.Message, step.want)
		}
		for _, c := range rt.Status.Conditions {
			if (c.Type == imv1.ConditionReconciling || c.Type == imv1.ConditionStalled) && c.Reason == "" {
				t.Errorf("state %s: condition %s without a reason (the API refuses it)", step.state, c.Type)
			}
		}
	}
	for _, c := range rt.Status.Conditions {
		if c.Type == imv1.ConditionReconciling || c.Type == imv1.ConditionStalled {
			t.Errorf("a Ready Runtime keeps condition %s", c.Type)
		}
	}
}
