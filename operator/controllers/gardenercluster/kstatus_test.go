package gardenercluster

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestKStatusOfTheGardenerClusterStatus: kstatus (Flux, Argo CD and kpt health checks) reads the status the
// controller writes across Pending -> Error -> Pending -> Ready -> Error: Pending is InProgress, Error Failed (also
// before the first success, when only Ready used to record the generation), Ready Current with no Reconciling or
// Stalled condition left from before.
func TestKStatusOfTheGardenerClusterStatus(t *testing.T) {
	gc := &imv1.GardenerCluster{TypeMeta: metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "GardenerCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", Generation: 2}}
	for _, step := range []struct {
		name  string
		apply func()
		want  status.Status
	}{
		{"waiting for the shoot", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StatePending, Reason: kubeconfig.ReasonWaitingForShoot, Message: "shoot not ready"})
		}, status.InProgressStatus},
		{"the first request fails", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateError, Reason: kubeconfig.ReasonFailedToGetKubeconfig, Message: "gardener says no"})
		}, status.FailedStatus},
		{"waiting again", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StatePending, Reason: kubeconfig.ReasonWaitingForShoot, Message: "shoot not ready"})
		}, status.InProgressStatus},
		{"written", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateReady, OK: true, Reason: kubeconfig.ReasonSecretCreated, Message: "written"})
		}, status.CurrentStatus},
		{"still valid", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateReady, OK: true, Reason: kubeconfig.ReasonSecretValid, Message: "valid", Keep: true})
		}, status.CurrentStatus},
		{"rotation fails", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateError, Reason: kubeconfig.ReasonFailedToGetKubeconfig, Message: "gardener says no"})
		}, status.FailedStatus},
		{"rotated", func() {
			result(gc, kubeconfig.Status{State: kubeconfig.StateReady, OK: true, Reason: kubeconfig.ReasonSecretRotated, Message: "rotated"})
		}, status.CurrentStatus},
	} {
		step.apply()
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(gc)
		if err != nil {
			t.Fatal(err)
		}
		res, err := status.Compute(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != step.want {
			t.Errorf("%s (state %s): kstatus %s (%s); want %s", step.name, gc.Status.State, res.Status, res.Message, step.want)
		}
	}
	for _, c := range gc.Status.Conditions {
		if c.Type == imv1.ConditionReconciling || c.Type == imv1.ConditionStalled {
			t.Errorf("a Ready GardenerCluster keeps condition %s", c.Type)
		}
	}
}
