package admission_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/test/testenv"
)

// applyManifest creates every document of a manifest file (in namespace ns when it has none) with an optional name
// prefix, as kustomize would.
func applyManifest(t *testing.T, c client.Client, path, ns, prefix string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetName(prefix + u.GetName())
		if ns != "" && u.GetKind() == "RoleBinding" {
			u.SetNamespace(ns)
		}
		if err := c.Create(context.Background(), u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// bindClusterAdminInKCPSystem gives the ServiceAccount kcp-system/name every permission in kcp-system (RBAC says
// yes to all there; an admission policy must still say no).
func bindClusterAdminInKCPSystem(t *testing.T, c client.Client, name string) {
	t.Helper()
	broad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "broad-" + name, "namespace": "kcp-system"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": "kcp-system"}}}}
	if err := c.Create(context.Background(), broad); err != nil {
		t.Fatal(err)
	}
}

// as returns a client that acts as the ServiceAccount kcp-system/name.
func (a *apiServer) as(t *testing.T, name string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(a.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kcp-system:" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kcp-system", "system:authenticated"}}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIntegrationOnlyNamedComponentsRequestKubeconfigs applies the shipped requester role, its bindings
// (config/requesters) and the admission policy (config/admission): the named components (and break-glass members of
// system:masters) may create ServiceAccountKubeconfigs; anyone else, also a component whose roles grant cluster-admin
// in the namespace, may not; the operator's metadata patches pass.
func TestIntegrationOnlyNamedComponentsRequestKubeconfigs(t *testing.T) {
	api := startOwnAPIServer(t)
	ctx := context.Background()
	root := filepath.Join("..", "..", "config")
	applyManifest(t, api.client, filepath.Join(root, "rbac", "serviceaccountkubeconfig_requester_role.yaml"), "", "kim-")
	for _, f := range []string{"lifecycle_manager.yaml", "kyma_environment_broker.yaml"} {
		applyManifest(t, api.client, filepath.Join(root, "requesters", f), "kcp-system", "")
	}
	applyManifest(t, api.client, filepath.Join(root, "admission", "serviceaccountkubeconfig_requesters.yaml"), "", "")
	// Another component whose roles in kcp-system allow everything there (RBAC says yes, the policy no).
	other := sampleServiceAccountKubeconfig(t)
	other.SetName("other")
	bindClusterAdminInKCPSystem(t, api.client, "some-operator")

	// The policy takes effect a moment after it is created.
	var refusal error
	testenv.Eventually(t, 30*time.Second, "the policy refuses a component with cluster-admin in kcp-system", func() (bool, string) {
		refusal = api.as(t, "some-operator").Create(ctx, sampleServiceAccountKubeconfig(t).DeepCopy(), client.DryRunAll)
		return apierrors.IsForbidden(refusal) || apierrors.IsInvalid(refusal), errString(refusal)
	})
	if !strings.Contains(refusal.Error(), "only system:serviceaccount:kcp-system:klm-controller-manager, system:serviceaccount:kcp-system:kcp-kyma-environment-broker may create") {
		t.Errorf("the refusal does not say who may: %v", refusal)
	}

	lm := sampleServiceAccountKubeconfig(t)
	if err := api.as(t, "klm-controller-manager").Create(ctx, lm); err != nil {
		t.Fatalf("lifecycle-manager may not create its request: %v", err)
	}
	keb := sampleServiceAccountKubeconfig(t)
	keb.SetName("keb")
	if err := api.as(t, "kcp-kyma-environment-broker").Create(ctx, keb); err != nil {
		t.Fatalf("KEB may not create its request: %v", err)
	}
	err := api.as(t, "some-operator").Create(ctx, other)
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "system:serviceaccount:kcp-system:some-operator") {
		t.Errorf("a component with cluster-admin in kcp-system: %v, want the policy's refusal", err)
	}
	if err := api.as(t, "nobody").Create(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("a ServiceAccount without roles: %v, want Forbidden", err)
	}

	breakGlass := sampleServiceAccountKubeconfig(t)
	breakGlass.SetName("break-glass")
	if err := api.client.Create(ctx, breakGlass); err != nil {
		t.Errorf("a member of system:masters: %v, want allowed", err)
	}

	// The operator, with exactly the bundle's permissions, patches metadata (its finalizer); the spec is the
	// requester's: RBAC lets the operator patch, the policy refuses a spec change.
	opCfg, err := testenv.GrantBundleKCP(ctx, testenv.RepoRoot(), api.cfg, []string{"kcp-system"})
	if err != nil {
		t.Fatal(err)
	}
	operator, err := client.New(opCfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cur := lm.DeepCopy()
	if err := operator.Get(ctx, client.ObjectKeyFromObject(lm), cur); err != nil {
		t.Fatal(err)
	}
	finalizer := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["infrastructuremanager.kyma-project.io/serviceaccountkubeconfig"]}}`))
	if err := operator.Patch(ctx, cur, finalizer); err != nil {
		t.Errorf("the operator's metadata patch: %v, want allowed", err)
	}
	spec := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"validity":"1h"}}`))
	if err := operator.Patch(ctx, cur, spec); !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("the operator changed a request's spec: %v, want the policy's refusal", err)
	}
	// What the bundle does not grant is refused by RBAC, whoever the admission policies would let through.
	if err := operator.Update(ctx, cur); !apierrors.IsForbidden(err) {
		t.Errorf("an update by the operator: %v, want Forbidden (the bundle grants patch only)", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "created"
	}
	return err.Error()
}
