package scheme_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestGardenerTypesAreReadAsProtobuf asks a recording server for a shoot, a credentials binding and a Runtime with a
// client built on the operator's scheme: the Gardener types are asked for in protobuf (what the gardener-apiserver
// serves for them), the Runtime, a custom resource, in JSON.
func TestGardenerTypesAreReadAsProtobuf(t *testing.T) {
	var mu sync.Mutex
	accept := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accept[strings.Split(strings.TrimPrefix(r.URL.Path, "/apis/"), "/")[0]] = r.Header.Get("Accept")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	defer srv.Close()

	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{gardencorev1beta1.SchemeGroupVersion.WithKind("Shoot"),
		securityv1alpha1.SchemeGroupVersion.WithKind("CredentialsBinding"), imv1.GroupVersion.WithKind("Runtime")} {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	c, err := client.New(&rest.Config{Host: srv.URL}, client.Options{Scheme: s, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "garden-kyma", Name: "c-1"}
	for _, obj := range []client.Object{&gardencorev1beta1.Shoot{}, &securityv1alpha1.CredentialsBinding{}, &imv1.Runtime{}} {
		if err := c.Get(context.Background(), key, obj); err == nil {
			t.Fatalf("get %T: want the server's NotFound", obj)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, group := range []string{gardencorev1beta1.SchemeGroupVersion.Group, securityv1alpha1.SchemeGroupVersion.Group} {
		if got := accept[group]; !strings.HasPrefix(got, "application/vnd.kubernetes.protobuf") {
			t.Errorf("%s: Accept %q, want protobuf first", group, got)
		}
	}
	if got := accept[imv1.GroupVersion.Group]; strings.Contains(got, "protobuf") {
		t.Errorf("%s (a custom resource): Accept %q, want JSON only", imv1.GroupVersion.Group, got)
	}
}
