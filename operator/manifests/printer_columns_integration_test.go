package manifests_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/tools"
)

// checkPrinterColumns reads what `kubectl get -o wide` prints (the server-side Table) for a Runtime and a
// GardenerCluster whose Ready condition says why they are not ready, and runs the real kubectl where it is installed:
// `kubectl get rt -o wide` shows the reason, `kubectl wait --for=condition=Ready gardenercluster/<id>` returns once
// the condition turns True.
func checkPrinterColumns(t *testing.T, k *kcp) {
	ctx := context.Background()
	rt := kebRuntime(t)
	if err := k.client.Create(ctx, rt); err != nil {
		t.Fatalf("create the KEB Runtime: %v", err)
	}
	id := rt.GetName()
	setStatus(t, k, "runtimes", id, map[string]any{"state": "Pending", "conditions": []any{
		condition(imv1.ConditionReady, "False", "WaitingForGardener", "Gardener Create Processing (12%)")}})
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": imv1.GroupVersion.String(), "kind": "GardenerCluster",
		"metadata": map[string]any{"name": id, "namespace": kcpNamespace},
		"spec": map[string]any{"shoot": map[string]any{"name": "c-91f0e7a"},
			"kubeconfig": map[string]any{"secret": map[string]any{"name": "kubeconfig-" + id, "namespace": kcpNamespace, "key": "config"}}},
	}}
	if err := k.client.Create(ctx, gc); err != nil {
		t.Fatalf("create GardenerCluster: %v", err)
	}
	setStatus(t, k, "gardenerclusters", id, map[string]any{"state": "Pending", "conditions": []any{
		condition(imv1.ConditionKubeconfigManagement, "False", "WaitingForShoot", "shoot not ready"),
		condition(imv1.ConditionReady, "False", "WaitingForShoot", "shoot not ready")}})

	for _, tc := range []struct{ resource, reason, message string }{
		{"runtimes", "WaitingForGardener", "Gardener Create Processing (12%)"},
		{"gardenerclusters", "WaitingForShoot", "shoot not ready"},
	} {
		table := getTable(t, k, tc.resource)
		cells := map[string]any{}
		for i, col := range table.ColumnDefinitions {
			if col.Name == "Reason" || col.Name == "Message" {
				if col.Priority != 1 {
					t.Errorf("%s: column %s has priority %d; want 1 (only -o wide shows it)", tc.resource, col.Name, col.Priority)
				}
				if len(table.Rows) == 1 {
					cells[col.Name] = table.Rows[0].Cells[i]
				}
			}
		}
		if diff := cmp.Diff(map[string]any{"Reason": tc.reason, "Message": tc.message}, cells); diff != "" {
			t.Errorf("%s: Reason/Message cells (-want +got):\n%s", tc.resource, diff)
		}
	}

	kubectl := tools.Require(t, "kubectl", "the test compares what it prints with the Table API")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, k.env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) *exec.Cmd {
		return exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "-n", kcpNamespace}, args...)...)
	}
	out, err := run("get", "rt", "-o", "wide").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "REASON") || !strings.Contains(string(out), "WaitingForGardener") {
		t.Errorf("kubectl get rt -o wide: %v\n%s", err, out)
	}
	if out, _ := run("get", "rt").CombinedOutput(); strings.Contains(string(out), "REASON") {
		t.Errorf("kubectl get rt (not wide) shows the priority-1 Reason column:\n%s", out)
	}
	wait := run("wait", "--for=condition=Ready", "gardenercluster/"+id, "--timeout=60s")
	var waitOut bytes.Buffer
	wait.Stdout, wait.Stderr = &waitOut, &waitOut
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // kubectl is waiting now
	// As the operator writes it: with the generation it observed (the CRD defaults it to 0 on read, and kubectl
	// wait takes a status behind the generation for not yet met).
	setStatus(t, k, "gardenerclusters", id, map[string]any{"state": "Ready", "observedGeneration": int64(1), "conditions": []any{
		condition(imv1.ConditionKubeconfigManagement, "True", "KubeconfigSecretCreated", "written"),
		condition(imv1.ConditionReady, "True", "KubeconfigSecretCreated", "written")}})
	if err := wait.Wait(); err != nil {
		t.Errorf("kubectl wait --for=condition=Ready gardenercluster/%s: %v\n%s", id, err, waitOut.String())
	}
}

// kebRuntime is the Runtime KEB creates for a trial (operator/api/v1/testdata), in kcp-system.
func kebRuntime(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(repoPath("operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &rt.Object); err != nil {
		t.Fatalf("decode the KEB Runtime: %v", err)
	}
	return rt
}

func condition(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

func setStatus(t *testing.T, k *kcp, resource, name string, status map[string]any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(imv1.GroupVersion.String())
	u.SetKind(map[string]string{"runtimes": "Runtime", "gardenerclusters": "GardenerCluster"}[resource])
	u.SetNamespace(kcpNamespace)
	u.SetName(name)
	if err := k.client.Status().Patch(context.Background(), u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("status of %s %s: %v", resource, name, err)
	}
}

// getTable fetches the list as kubectl does for printing: the server renders the CRD's printer columns.
func getTable(t *testing.T, k *kcp, resource string) *metav1.Table {
	t.Helper()
	cfg := rest.CopyConfig(k.cfg)
	cfg.GroupVersion = &imv1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().Namespace(kcpNamespace).Resource(resource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("table of %s: %v", resource, err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("decode table: %v", err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table of %s has %d rows, want 1", resource, len(table.Rows))
	}
	return table
}
