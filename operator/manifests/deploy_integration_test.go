package manifests_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/test/testenv/tools"
)

// TestIntegrationDeployTargets runs what `make deploy`, `make uninstall` and `make undeploy` run (hack/deploy.sh with
// the real kubectl) against a real API server: deploy sets the image, uninstall refuses while a Runtime exists,
// undeploy removes the operator but keeps the CRDs, the Runtime and the namespace.
func TestIntegrationDeployTargets(t *testing.T) {
	kubectl := tools.Require(t, "kubectl", "the deploy targets run it")
	k := startKCP(t, nil)
	ctx := context.Background()
	if err := k.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		t.Fatal(err)
	}
	for _, crd := range prometheusOperatorCRDs() {
		if err := k.client.Create(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, k.env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(repoPath("hack", "deploy.sh")); err != nil { // so go test's cache notices a changed script
		t.Fatal(err)
	}
	script := func(args ...string) (string, error) {
		cmd := exec.Command(repoPath("hack", "deploy.sh"), args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "KUBECTL="+kubectl, "FORCE=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := script("deploy", "registry.example/kim:1.2.3"); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	k.refresh(t)
	dep := &appsv1.Deployment{}
	if err := k.client.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: "kim-controller-manager"}, dep); err != nil {
		t.Fatalf("deployment after deploy: %v", err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "registry.example/kim:1.2.3" {
		t.Errorf("deployed image %s, want registry.example/kim:1.2.3", img)
	}

	rt := kebRuntime(t)
	if err := k.client.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	if out, err := script("uninstall"); err == nil || !strings.Contains(out, "would be deleted with the CRDs") {
		t.Fatalf("uninstall with a Runtime present: err %v\n%s", err, out)
	}
	if out, err := script("undeploy"); err != nil {
		t.Fatalf("undeploy: %v\n%s", err, out)
	}
	if err := k.client.Get(ctx, client.ObjectKeyFromObject(dep), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployment after undeploy: %v, want not found", err)
	}
	if err := k.client.Get(ctx, client.ObjectKeyFromObject(rt), rt.DeepCopy()); err != nil {
		t.Errorf("the Runtime after undeploy: %v (undeploy must keep the CRDs and their objects)", err)
	}
	if err := k.client.Get(ctx, client.ObjectKey{Name: kcpNamespace}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace after undeploy: %v", err)
	}

	if err := k.client.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	if out, err := script("uninstall"); err != nil {
		t.Fatalf("uninstall without Runtimes: %v\n%s", err, out)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.client.Get(ctx, client.ObjectKey{Name: "runtimes.infrastructuremanager.kyma-project.io"}, crd); err == nil && crd.DeletionTimestamp == nil {
		t.Error("the Runtime CRD is still there after uninstall")
	}
}
