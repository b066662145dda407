package manifests_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// checkKStatus: kstatus itself (as Flux, Argo CD and kpt use it) judges Runtimes on the installed CRD: one nobody
// has looked at yet is InProgress (the CRD defaults status.observedGeneration to 0 on read), one the operator
// reports Failed (Stalled) is Failed.
func checkKStatus(t *testing.T, k *kcp) {
	ctx := context.Background()
	rt := kebRuntime(t)
	rt.SetName("kstatus-" + rt.GetName())
	if err := k.client.Create(ctx, rt); err != nil {
		t.Fatalf("create a Runtime: %v", err)
	}
	compute := func() *status.Result { return kstatusOf(t, k, rt) }
	if res := compute(); res.Status != status.InProgressStatus {
		t.Errorf("a Runtime the operator has not observed is %s (%s); want %s", res.Status, res.Message, status.InProgressStatus)
	}
	setStatus(t, k, "runtimes", rt.GetName(), map[string]any{"state": "Failed", "observedGeneration": int64(1), "conditions": []any{
		condition(imv1.ConditionReady, "False", "ShootCreationFailed", "quota exceeded"),
		condition(imv1.ConditionStalled, "True", "ShootCreationFailed", "quota exceeded")}})
	if res := compute(); res.Status != status.FailedStatus {
		t.Errorf("a Failed Runtime is %s (%s) for kstatus; want %s", res.Status, res.Message, status.FailedStatus)
	}
}

// checkGardenerClusterKStatus: the same for GardenerClusters: unobserved is InProgress, Error (Stalled) is Failed.
func checkGardenerClusterKStatus(t *testing.T, k *kcp) {
	ctx := context.Background()
	const id = "kstatus-gc"
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": imv1.GroupVersion.String(), "kind": "GardenerCluster",
		"metadata": map[string]any{"name": id, "namespace": kcpNamespace},
		"spec": map[string]any{"shoot": map[string]any{"name": "c-5a1b2c3"},
			"kubeconfig": map[string]any{"secret": map[string]any{"name": "kubeconfig-" + id, "namespace": kcpNamespace, "key": "config"}}},
	}}
	if err := k.client.Create(ctx, gc); err != nil {
		t.Fatalf("create a GardenerCluster: %v", err)
	}
	compute := func() *status.Result { return kstatusOf(t, k, gc) }
	if res := compute(); res.Status != status.InProgressStatus {
		t.Errorf("a GardenerCluster the operator has not observed is %s (%s); want %s", res.Status, res.Message, status.InProgressStatus)
	}
	setStatus(t, k, "gardenerclusters", id, map[string]any{"state": "Error", "observedGeneration": int64(1), "conditions": []any{
		condition(imv1.ConditionReady, "False", "FailedToGetKubeconfig", "gardener says no"),
		condition(imv1.ConditionStalled, "True", "FailedToGetKubeconfig", "gardener says no")}})
	if res := compute(); res.Status != status.FailedStatus {
		t.Errorf("a GardenerCluster in Error is %s (%s) for kstatus; want %s", res.Status, res.Message, status.FailedStatus)
	}
}

// kstatusOf is kstatus' judgement of obj as the API server returns it now.
func kstatusOf(t *testing.T, k *kcp, obj *unstructured.Unstructured) *status.Result {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	if err := k.client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(got)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	return res
}
