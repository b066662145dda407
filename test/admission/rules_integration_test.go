package admission_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func manyStrings(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("user-%d@example.com", i)
	}
	return out
}

func manyLabels(n int) map[string]any {
	out := map[string]any{}
	for i := range n {
		out[fmt.Sprintf("label-%d", i)] = "v"
	}
	return out
}

func manyTaints(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"key": fmt.Sprintf("taint-%d", i), "effect": "NoSchedule"}
	}
	return out
}

// TestIntegrationRuntimeIDLength: the runtime ID (the Runtime's name) is the value of the runtime-id label of every
// object of the runtime, so it has at most 63 characters; a longer one would loop in the controller.
func TestIntegrationRuntimeIDLength(t *testing.T) {
	api := startAPIServer(t)
	obj := toUnstructured(t, runtimeFixtures(t)["../../operator/api/v1/testdata/keb-runtime-trial.yaml"])
	obj.SetNamespace(api.ns)
	obj.SetName(strings.Repeat("a", 64))
	err := api.client.Create(context.Background(), obj)
	if err == nil || !strings.Contains(err.Error(), "metadata.name") || !strings.Contains(err.Error(), "63 characters") {
		t.Errorf("a 64-character runtime ID: %v, want a rejection naming metadata.name", err)
	}
}

func assertRejected(t *testing.T, err error, wantField, wantText string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the document; want a rejection naming %s", wantField)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error naming %s, got %v", wantField, err)
	}
	if !strings.Contains(err.Error(), wantField) {
		t.Errorf("the message does not name the field %s: %v", wantField, err)
	}
	if wantText != "" && !strings.Contains(err.Error(), wantText) {
		t.Errorf("the message does not say %q: %v", wantText, err)
	}
}

func TestIntegrationImmutableFieldsCannotChange(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	base := toUnstructured(t, runtimeFixtures(t)["../../operator/api/v1/testdata/keb-runtime-trial.yaml"])
	base.SetNamespace(api.ns)
	if err := api.client.Create(ctx, base.DeepCopy()); err != nil {
		t.Fatalf("create: %v", err)
	}
	cases := []struct {
		reason    string
		mutate    mutation
		wantField string
		wantText  string
	}{
		{"shoot name", set("spec.shoot.name", "c-1234567"), "spec.shoot.name", "shoot name is immutable"},
		{"provider type", set("spec.shoot.provider.type", "gcp"), "spec.shoot.provider.type", "provider type is immutable"},
		{"region", set("spec.shoot.region", "eu-central-1"), "spec.shoot.region", "region is immutable"},
		{"nodes CIDR", set("spec.shoot.networking.nodes", "10.180.0.0/16"), "spec.shoot.networking.nodes", "nodes CIDR is immutable"},
		{"pods CIDR", set("spec.shoot.networking.pods", "10.64.0.0/13"), "spec.shoot.networking.pods", "pods CIDR is immutable"},
		{"services CIDR", set("spec.shoot.networking.services", "10.112.0.0/13"), "spec.shoot.networking.services", "services CIDR is immutable"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(base.GroupVersionKind())
			if err := api.client.Get(ctx, client.ObjectKeyFromObject(base), current); err != nil {
				t.Fatalf("get: %v", err)
			}
			tc.mutate(current.Object)
			assertRejected(t, api.client.Update(ctx, current), tc.wantField, tc.wantText)
		})
	}
	t.Run("a mutable field can change", func(t *testing.T) {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(base.GroupVersionKind())
		if err := api.client.Get(ctx, client.ObjectKeyFromObject(base), current); err != nil {
			t.Fatalf("get: %v", err)
		}
		set("spec.shoot.provider.workers[0].maximum", int64(3))(current.Object)
		if err := api.client.Update(ctx, current); err != nil {
			t.Fatalf("raising the worker maximum was rejected: %v", err)
		}
	})
}

func gardenerCluster(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructuremanager.kyma-project.io/v1",
		"kind":       "GardenerCluster",
		"metadata":   map[string]any{"name": "91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43", "namespace": ns},
		"spec": map[string]any{
			"kubeconfig": map[string]any{"secret": map[string]any{
				"name": "kubeconfig-91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43", "namespace": ns, "key": "config"}},
			"shoot": map[string]any{"name": "c-91f0e7a"},
		},
	}}
	return u
}

func TestIntegrationGardenerClusterValidation(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	valid := gardenerCluster(api.ns)
	if err := api.client.Patch(ctx, valid.DeepCopy(), client.Apply, client.FieldOwner("keb"), //nolint:staticcheck // Strict validation needs the patch form

		client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		t.Fatalf("a KEB-shaped GardenerCluster was rejected: %v", err)
	}
	if w := api.warnings.take(); len(w) > 0 {
		t.Errorf("warnings for a valid GardenerCluster: %q", w)
	}
	cases := []struct {
		reason    string
		mutate    mutation
		wantField string
	}{
		{"missing shoot name", remove("spec.shoot.name"), "spec.shoot.name"},
		{"empty shoot name", set("spec.shoot.name", ""), "spec.shoot.name"},
		{"missing secret key", remove("spec.kubeconfig.secret.key"), "spec.kubeconfig.secret.key"},
		{"missing secret name", remove("spec.kubeconfig.secret.name"), "spec.kubeconfig.secret.name"},
		{"secret namespace is not a namespace name", set("spec.kubeconfig.secret.namespace", "KCP_System"), "spec.kubeconfig.secret.namespace"},
		{"missing spec", remove("spec"), "spec"},
	}
	for i, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			obj := gardenerCluster(api.ns)
			obj.SetName("gc-invalid-" + string(rune('a'+i)))
			tc.mutate(obj.Object)
			assertRejected(t, api.client.Create(ctx, obj), tc.wantField, "")
		})
	}
}
