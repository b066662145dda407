package admission_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sampleServiceAccountKubeconfig is the shipped sample (config/samples), which the demo applies.
func sampleServiceAccountKubeconfig(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("../../config/samples/infrastructuremanager_v1_serviceaccountkubeconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return toUnstructured(t, data)
}

func rule(ns []any, groups, resources, verbs []any) map[string]any {
	r := map[string]any{"apiGroups": groups, "resources": resources, "verbs": verbs}
	if ns != nil {
		r["namespaces"] = ns
	}
	return r
}

// TestIntegrationServiceAccountKubeconfigValidation: the sample is accepted as it is; what admission can judge of
// the no-escalation policy (escalate, bind, impersonate, wildcard verbs on wildcard resources, on roles and on
// impersonation targets, credentials and workloads cluster-wide and in kube-system, cluster-admin) is refused with a message naming the rule; identity fields are immutable.
func TestIntegrationServiceAccountKubeconfigValidation(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	sample := func(t *testing.T) *unstructured.Unstructured {
		t.Helper()
		obj := sampleServiceAccountKubeconfig(t)
		obj.SetNamespace(api.ns)
		return obj
	}
	valid := sample(t)
	if err := api.client.Patch(ctx, valid.DeepCopy(), client.Apply, client.FieldOwner("lifecycle-manager"), //nolint:staticcheck // Strict validation needs the patch form
		client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		t.Fatalf("the sample was rejected: %v", err)
	}
	if w := api.warnings.take(); len(w) > 0 {
		t.Errorf("warnings for the sample: %q", w)
	}
	kyma, core, pods, get := []any{"kyma-system"}, []any{""}, []any{"pods"}, []any{"get", "list"}
	cases := []struct {
		reason          string
		mutate          mutation
		field, wantText string
	}{
		{"escalate", set("spec.rules", []any{rule(kyma, core, pods, get), rule(nil, []any{"rbac.authorization.k8s.io"}, []any{"clusterroles"}, []any{"escalate"})}),
			"spec.rules[1]", `verb "escalate" is refused`},
		{"bind in any case", set("spec.rules", []any{rule(kyma, []any{"rbac.authorization.k8s.io"}, []any{"roles"}, []any{"get", "Bind"})}),
			"spec.rules[0]", `verb "Bind" is refused`},
		{"impersonate", set("spec.rules", []any{rule(nil, core, []any{"users"}, []any{"impersonate"})}), "spec.rules[0]", `verb "impersonate" is refused`},
		{"wildcard verbs on wildcard resources", set("spec.rules", []any{rule(kyma, []any{"*"}, []any{"*"}, []any{"*"})}),
			"spec.rules[0]", "wildcard verbs on wildcard resources"},
		{"wildcard verbs on roles", set("spec.rules", []any{rule(kyma, []any{"rbac.authorization.k8s.io"}, []any{"roles"}, []any{"*"})}),
			"spec.rules[0]", "include escalate and bind"},
		{"wildcard verbs on a role subresource in any group", set("spec.rules", []any{rule(nil, []any{"*"}, []any{"clusterroles/status"}, []any{"*"})}),
			"spec.rules[0]", "include escalate and bind"},
		{"wildcard verbs on serviceaccounts", set("spec.rules", []any{rule(kyma, core, []any{"serviceaccounts"}, []any{"*"})}),
			"spec.rules[0]", "include impersonate"},
		{"wildcard verbs on userextras", set("spec.rules", []any{rule(nil, []any{"authentication.k8s.io"}, []any{"userextras/scopes"}, []any{"*"})}),
			"spec.rules[0]", "include impersonate"},
		{"a */<key> subresource wildcard includes userextras/<key>", set("spec.rules", []any{rule(nil, []any{"authentication.k8s.io"}, []any{"*/scopes"}, []any{"*"})}),
			"spec.rules[0]", "include impersonate"},
		{"Secrets cluster-wide", set("spec.rules", []any{rule(nil, core, []any{"secrets"}, get)}),
			"spec.rules[0]", "Secrets and ServiceAccount tokens cluster-wide"},
		{"the subresource wildcard */token cluster-wide", set("spec.rules", []any{rule(nil, core, []any{"*/token"}, []any{"create"})}),
			"spec.rules[0]", "Secrets and ServiceAccount tokens cluster-wide"},
		{"everything of the core group cluster-wide, read-only", set("spec.rules", []any{rule(nil, []any{"*"}, []any{"*"}, get)}),
			"spec.rules[0]", "Secrets and ServiceAccount tokens cluster-wide"},
		{"tokens in kube-system", set("spec.rules", []any{rule(kyma, core, pods, get), rule([]any{"team-a", "kube-system"}, core, []any{"serviceaccounts/token"}, []any{"create"})}),
			"spec.rules[1]", "in kube-system"},
		{"wildcard verbs on tokens in kube-system", set("spec.rules", []any{rule([]any{"kube-system"}, core, []any{"serviceaccounts/token"}, []any{"*"})}),
			"spec.rules[0]", "in kube-system"},
		{"Secrets in kube-system", set("spec.rules", []any{rule([]any{"kube-system"}, []any{"*"}, []any{"secrets"}, get)}),
			"spec.rules[0]", "in kube-system"},
		{"create pods in kube-system", set("spec.rules", []any{rule(kyma, core, pods, get), rule([]any{"team-a", "kube-system"}, core, pods, []any{"create"})}),
			"spec.rules[1]", "workloads and commands in Pods in kube-system"},
		{"get pods/exec in kube-system (a WebSocket exec is a get)", set("spec.rules", []any{rule([]any{"kube-system"}, core, []any{"pods/exec"}, []any{"get"})}),
			"spec.rules[0]", "workloads and commands in Pods in kube-system"},
		{"*/attach in any group in kube-system", set("spec.rules", []any{rule([]any{"kube-system"}, []any{"*"}, []any{"*/attach"}, []any{"create"})}),
			"spec.rules[0]", "workloads and commands in Pods in kube-system"},
		{"patch pods/ephemeralcontainers in kube-system", set("spec.rules", []any{rule([]any{"kube-system"}, core, []any{"pods/ephemeralcontainers"}, []any{"patch"})}),
			"spec.rules[0]", "workloads and commands in Pods in kube-system"},
		{"wildcard verbs on daemonsets in kube-system", set("spec.rules", []any{rule([]any{"kube-system"}, []any{"apps"}, []any{"daemonsets"}, []any{"*"})}),
			"spec.rules[0]", "workloads and commands in Pods in kube-system"},
		{"patch deployments cluster-wide", set("spec.rules", []any{rule(nil, []any{"apps"}, []any{"deployments"}, []any{"get", "patch"})}),
			"spec.rules[0]", "workloads and commands in Pods cluster-wide"},
		{"every batch resource cluster-wide includes cronjobs", set("spec.rules", []any{rule(nil, []any{"batch"}, []any{"*"}, []any{"create"})}),
			"spec.rules[0]", "workloads and commands in Pods cluster-wide"},
		{"the subresource wildcard */exec cluster-wide", set("spec.rules", []any{rule(nil, core, []any{"*/exec"}, []any{"create"})}),
			"spec.rules[0]", "workloads and commands in Pods cluster-wide"},
		{"update replicationcontrollers cluster-wide", set("spec.rules", []any{rule(nil, core, []any{"replicationcontrollers"}, []any{"update"})}),
			"spec.rules[0]", "workloads and commands in Pods cluster-wide"},
		{"cluster-admin", set("spec.clusterRole", map[string]any{"name": "cluster-admin"}), "spec.clusterRole.name", "cluster-admin is refused"},
		{"the aggregated view", set("spec.clusterRole", map[string]any{"name": "view", "namespaces": []any{"team-a"}}), "spec.clusterRole.name", "aggregated"},
		{"no rules and no ClusterRole", remove("spec.rules"), "spec", "at least one of rules and clusterRole"},
		{"a rule without verbs", set("spec.rules", []any{rule(kyma, core, pods, []any{})}), "spec.rules[0].verbs", ""},
		{"a namespace that is not a name", set("spec.rules", []any{rule([]any{"Kyma_System"}, core, pods, get)}), "spec.rules[0].namespaces[0]", ""},
		{"validity below the TokenRequest minimum", set("spec.validity", "5m"), "spec.validity", "between 10m"},
		{"validity above the bound", set("spec.validity", "720h"), "spec.validity", "168h"},
		{"validity not a duration", set("spec.validity", "a day"), "spec.validity", ""},
		{"the admin kubeconfig Secret", set("spec.secretName", "kubeconfig-91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43"), "spec.secretName: Invalid value", "admin kubeconfig"},
		{"another runtime's admin kubeconfig Secret", set("spec.secretName", "kubeconfig-0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"), "spec.secretName: Invalid value", "admin kubeconfig"},
		{"the operator's Gardener kubeconfig Secret", set("spec.secretName", "kim-gardener-kubeconfig"), "spec.secretName: Invalid value", "kim-* names are Secrets the operator"},
		{"any name the operator may take", set("spec.secretName", "kim-registry-cache-rid"), "spec.secretName: Invalid value", "kim-* names are Secrets the operator"},
		{"a runtime ID that is not a name", set("spec.runtimeID", "91B7C0DE"), "spec.runtimeID", ""},
		{"no ServiceAccount name", remove("spec.serviceAccount.name"), "spec.serviceAccount.name", ""},
	}
	for i, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			obj := sample(t)
			obj.SetName(fmt.Sprintf("sak-invalid-%d", i))
			tc.mutate(obj.Object)
			assertRejected(t, api.client.Create(ctx, obj), tc.field, tc.wantText)
		})
	}

	t.Run("Secrets in named namespaces besides kube-system pass admission: the operator decides with the landscape configuration", func(t *testing.T) {
		obj := sample(t)
		obj.SetName("sak-named-secrets")
		set("spec.rules", []any{rule([]any{"kyma-system", "istio-system"}, core, []any{"secrets", "*/token"}, get)})(obj.Object)
		if err := api.client.Create(ctx, obj); err != nil {
			t.Errorf("rejected at admission: %v", err)
		}
	})
	t.Run("workloads in named namespaces besides kube-system, and reading them everywhere, pass admission", func(t *testing.T) {
		obj := sample(t)
		obj.SetName("sak-named-workloads")
		set("spec.rules", []any{
			rule([]any{"kyma-system", "team-a"}, []any{"", "apps", "batch"}, []any{"pods", "pods/exec", "deployments", "jobs"}, []any{"create", "patch"}),
			rule(nil, []any{"", "apps", "batch"}, []any{"pods", "pods/log", "deployments", "daemonsets", "cronjobs"}, []any{"get", "list", "watch"}),
			rule([]any{"kube-system"}, core, []any{"pods/portforward", "pods/ephemeralcontainers"}, []any{"get"}),
			rule([]any{"kube-system"}, []any{"apps"}, []any{"deployments/scale"}, []any{"update"}),
			rule(nil, []any{"example.com"}, []any{"deployments"}, []any{"create"}),
		})(obj.Object)
		if err := api.client.Create(ctx, obj); err != nil {
			t.Errorf("rejected at admission: %v", err)
		}
	})
	t.Run("validity defaults to 24h", func(t *testing.T) {
		obj := sample(t)
		obj.SetName("sak-default-validity")
		remove("spec.validity")(obj.Object)
		if err := api.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if v, _, _ := unstructured.NestedString(obj.Object, "spec", "validity"); v != "24h" {
			t.Errorf("validity defaulted to %q, want 24h", v)
		}
	})

	immutable := []struct {
		reason, field string
		mutate        mutation
	}{
		{"runtime ID", "spec.runtimeID", set("spec.runtimeID", "another-runtime")},
		{"ServiceAccount", "spec.serviceAccount", set("spec.serviceAccount.name", "someone-else")},
		{"Secret", "spec.secretName", set("spec.secretName", "another-secret")},
	}
	for _, tc := range immutable {
		t.Run("immutable "+tc.reason, func(t *testing.T) {
			current := valid.DeepCopy()
			if err := api.client.Get(ctx, client.ObjectKeyFromObject(valid), current); err != nil {
				t.Fatal(err)
			}
			tc.mutate(current.Object)
			assertRejected(t, api.client.Update(ctx, current), tc.field, "immutable")
		})
	}
	t.Run("rules can change", func(t *testing.T) {
		current := valid.DeepCopy()
		if err := api.client.Get(ctx, client.ObjectKeyFromObject(valid), current); err != nil {
			t.Fatal(err)
		}
		set("spec.rules", []any{rule(kyma, core, []any{"pods", "configmaps"}, get)})(current.Object)
		if err := api.client.Update(ctx, current); err != nil {
			t.Errorf("changing the rules was rejected: %v", err)
		}
	})
}
