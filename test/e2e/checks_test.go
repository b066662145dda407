package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Checks of what the operator produced: kubeconfigs that work, administrators bound in the runtime, shoots as
// generated.

// checkKubeconfigWorks uses the kubeconfig from the Secret against the runtime API server and returns the CA it
// trusts (to tell clusters apart).
func checkKubeconfigWorks(t testing.TB, kubeconfig []byte) []byte {
	t.Helper()
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig does not parse: %v", err)
	}
	cur := kc.Contexts[kc.CurrentContext]
	if kc.CurrentContext == "" || cur == nil || kc.Clusters[cur.Cluster] == nil ||
		len(kc.Clusters[cur.Cluster].CertificateAuthorityData) == 0 || kc.Clusters[cur.Cluster].Server == "" {
		t.Fatalf("kubeconfig lacks current-context, server or CA data (docs/keb-contract.md)")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubeconfig does not authenticate at the runtime API server: %v", err)
	}
	return kc.Clusters[cur.Cluster].CertificateAuthorityData
}

// runtimeAdmin is an admin client of the runtime API server behind a shoot (from the sandbox, not the operator).
func (w *world) runtimeAdmin(t testing.TB, shootName string) client.Client {
	t.Helper()
	cfg, err := w.env.Runtimes.AdminConfig("garden-" + w.project + "/" + shootName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rest.CopyConfig(cfg), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkAdminBindings asserts that every administrator is bound to cluster-admin in the runtime and that no other
// binding of the operator exists there.
func (w *world) checkAdminBindings(t testing.TB, shootName string, admins []string) {
	t.Helper()
	c := w.runtimeAdmin(t, shootName)
	var list rbacv1.ClusterRoleBindingList
	if err := c.List(context.Background(), &list, client.MatchingLabels{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}); err != nil {
		t.Fatalf("list admin bindings in runtime %s: %v", shootName, err)
	}
	got := map[string]string{}
	for _, b := range list.Items {
		if b.RoleRef.Name != "cluster-admin" || len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.UserKind {
			t.Errorf("binding %s in runtime %s: role %s, subjects %+v", b.Name, shootName, b.RoleRef.Name, b.Subjects)
			continue
		}
		got[b.Subjects[0].Name] = b.Name
	}
	if len(got) != len(admins) {
		t.Errorf("runtime %s has admin bindings for %v, want exactly %v", shootName, keys(got), admins)
	}
	for _, a := range admins {
		if got[a] != runtimeconfig.AdminBindingName(a) {
			t.Errorf("runtime %s: no ClusterRoleBinding %s for administrator %s (have %v)", shootName, runtimeconfig.AdminBindingName(a), a, got)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkShootMatchesGenerated compares the shoot in the garden with the shoot the operator generates for rt (the
// golden output for golden runtimes): every field of the generated shoot must be in the garden's shoot with the same
// value. The gardener-apiserver adds defaults, and completes a major.minor Kubernetes version to a patch version.
func (w *world) checkShootMatchesGenerated(t testing.TB, rt *imv1.Runtime) {
	t.Helper()
	spec, err := shoot.Generate(mapping.Runtime(rt), w.shootConfig)
	if err != nil {
		t.Fatalf("generate shoot of %s: %v", rt.Name, err)
	}
	want, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := w.shoot(t, rt.Spec.Shoot.Name)
	if got == nil {
		t.Fatalf("shoot %s does not exist", rt.Spec.Shoot.Name)
	}
	wantMeta := metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace, Labels: want.Labels, Annotations: want.Annotations}
	wantDoc := map[string]any{"metadata": toMap(t, wantMeta), "spec": toMap(t, want.Spec)}
	gotDoc := map[string]any{"metadata": toMap(t, got.ObjectMeta), "spec": toMap(t, got.Spec)}
	for _, d := range subsetDiff("", wantDoc, gotDoc) {
		t.Errorf("shoot %s differs from the generated spec: %s", got.Name, d)
	}
}

func toMap(t testing.TB, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// subsetDiff lists the places where want is not contained in got.
func subsetDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, subsetDiff(path+"."+k, v, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d elements %v, got %v", path, len(w), w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if path == ".spec.kubernetes.version" {
		if ws, gs := fmt.Sprint(want), fmt.Sprint(got); gs == ws || strings.HasPrefix(gs, ws+".") {
			return nil
		}
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

// workerPools returns the names of the shoot's worker pools.
func workerPools(s *gardencorev1beta1.Shoot) []string {
	var out []string
	for _, w := range s.Spec.Provider.Workers {
		out = append(out, w.Name)
	}
	return out
}

func worker(s *gardencorev1beta1.Shoot, name string) *gardencorev1beta1.Worker {
	for i := range s.Spec.Provider.Workers {
		if s.Spec.Provider.Workers[i].Name == name {
			return &s.Spec.Provider.Workers[i]
		}
	}
	return nil
}
