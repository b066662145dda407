package guard

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const ns = "garden-kyma"

type recorder struct{ calls int }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls++
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		reason string
		method string
		path   string
		allow  bool
	}{
		{"shoots are read in the project", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1", true},
		{"shoots are listed in the project", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots", true},
		{"shoots are watched in the project", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots?watch=true", true},
		{"shoots are created", http.MethodPost, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots", true},
		{"shoots are patched (server-side apply)", http.MethodPatch, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1", true},
		{"shoots are updated", http.MethodPut, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1", true},
		{"shoots are deleted one by one", http.MethodDelete, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1", true},
		{"admin kubeconfigs are requested", http.MethodPost, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1/adminkubeconfig", true},
		{"structured-auth ConfigMaps are applied", http.MethodPatch, "/api/v1/namespaces/garden-kyma/configmaps/c-1-oidc", true},
		{"structured-auth ConfigMaps are created by an apply", http.MethodPost, "/api/v1/namespaces/garden-kyma/configmaps", true},
		{"structured-auth ConfigMaps are watched", http.MethodGet, "/api/v1/namespaces/garden-kyma/configmaps?watch=true", true},
		{"seeds are listed", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/seeds", true},
		{"a cloud profile is read by name", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/cloudprofiles/aws", true},
		{"discovery works", http.MethodGet, "/apis/core.gardener.cloud/v1beta1", true},
		{"the health endpoint is read", http.MethodGet, "/healthz", true},
		{"the version endpoint is read", http.MethodGet, "/version", true},
		{"registry credential copies are created", http.MethodPost, "/api/v1/namespaces/garden-kyma/secrets", true},
		{"registry credential copies are read by name", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets/reg-cache-0123", true},
		{"registry credential copies are deleted", http.MethodDelete, "/api/v1/namespaces/garden-kyma/secrets/reg-cache-0123", true},

		{"a project is never deleted", http.MethodDelete, "/apis/core.gardener.cloud/v1beta1/projects/kyma", false},
		{"the project is not read", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/projects/kyma", false},
		{"a credentials binding is read by name", http.MethodGet, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", true},
		{"a credentials binding is patched (its label dirty)", http.MethodPatch, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", true},
		{"credentials bindings are not listed", http.MethodGet, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings", false},
		{"credentials bindings are not watched", http.MethodGet, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings?watch=true", false},
		{"credentials bindings are not replaced", http.MethodPut, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", false},
		{"credentials bindings are not deleted", http.MethodDelete, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", false},
		{"credentials bindings of other projects are off limits", http.MethodPatch, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-other/credentialsbindings/aws", false},
		{"seeds are not read one by one", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/seeds/aws", false},
		{"seeds are not watched", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/seeds?watch=true", false},
		{"ConfigMaps are not replaced", http.MethodPut, "/api/v1/namespaces/garden-kyma/configmaps/c-1-oidc", false},
		{"ConfigMaps are not deleted", http.MethodDelete, "/api/v1/namespaces/garden-kyma/configmaps/c-1-oidc", false},
		{"cloud profiles are read-only", http.MethodPatch, "/apis/core.gardener.cloud/v1beta1/cloudprofiles/aws", false},
		{"cloud profiles are not listed", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/cloudprofiles", false},
		{"cloud profiles are not watched", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/cloudprofiles?watch=true", false},
		{"shoots of other projects are off limits", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-other/shoots/c-1", false},
		{"shoots are not listed across namespaces", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/shoots", false},
		{"shoots are not deleted as a collection", http.MethodDelete, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots", false},
		{"viewer kubeconfigs are not needed", http.MethodPost, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1/viewerkubeconfig", false},
		{"shoot status belongs to the gardenlet", http.MethodPatch, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/c-1/status", false},
		{"Secrets in the garden are never read", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets/aws", false},
		{"Secrets are never listed, not even by the operator's label (RBAC could not limit it)", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets?labelSelector=kyma-project.io%2Fruntime-id%3Drt-1%2Coperator.kyma-project.io%2Fmanaged-by%3Dinfrastructure-manager", false},
		{"Secrets are never watched, not even by the operator's label", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets?watch=true&labelSelector=operator.kyma-project.io%2Fmanaged-by%3Dinfrastructure-manager", false},
		{"registry credential copies of another namespace are never read", http.MethodGet, "/api/v1/namespaces/garden-other/secrets/reg-cache-0123", false},
		{"Secrets are never watched without the operator's label", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets?watch=true", false},
		{"Secrets of another namespace are never watched", http.MethodGet, "/api/v1/namespaces/garden-other/secrets?watch=true&labelSelector=operator.kyma-project.io%2Fmanaged-by%3Dinfrastructure-manager", false},
		{"Secrets are never listed without the operator's label", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets", false},
		{"Secrets are never listed with another selector", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets?labelSelector=operator.kyma-project.io%2Fmanaged-by%21%3Dinfrastructure-manager", false},
		{"Secrets are never updated", http.MethodPut, "/api/v1/namespaces/garden-kyma/secrets/reg-cache-1", false},
		{"cloud credentials are never deleted", http.MethodDelete, "/api/v1/namespaces/garden-kyma/secrets/aws", false},
		{"Secrets are not deleted as a collection", http.MethodDelete, "/api/v1/namespaces/garden-kyma/secrets?labelSelector=operator.kyma-project.io%2Fmanaged-by%3Dinfrastructure-manager", false},
		{"credentials bindings are read-only", http.MethodDelete, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", false},
		{"ConfigMaps elsewhere are off limits", http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/x", false},
		{"non-resource writes are refused", http.MethodPost, "/healthz", false},
		{"unknown non-resource paths are refused", http.MethodGet, "/logs/", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "https://garden.example"+tc.path, nil)
			next := &recorder{}
			_, err := RoundTripper(next, ProjectPolicy(ns)).RoundTrip(req)
			switch {
			case tc.allow && (err != nil || next.calls != 1):
				t.Errorf("%s %s: want sent, got err=%v calls=%d", tc.method, tc.path, err, next.calls)
			case !tc.allow && (!errors.Is(err, ErrRefused) || next.calls != 0):
				t.Errorf("%s %s: want refused before sending, got err=%v calls=%d", tc.method, tc.path, err, next.calls)
			}
		})
	}
}

// TestMigrationPolicy: kim migrate reads the project and asks for dry runs; any write is refused before it is sent.
func TestMigrationPolicy(t *testing.T) {
	const shoots = "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots"
	for _, tc := range []struct {
		reason string
		method string
		path   string
		allow  bool
	}{
		{"shoots are listed", http.MethodGet, shoots, true},
		{"a shoot is read", http.MethodGet, shoots + "/c-1", true},
		{"a dry-run apply asks what the operator's apply would store", http.MethodPatch, shoots + "/c-1?dryRun=All&fieldManager=kim&force=true", true},
		{"the authentication ConfigMaps are read", http.MethodGet, "/api/v1/namespaces/garden-kyma/configmaps/structured-auth-c-1", true},
		{"SecretBindings are read", http.MethodGet, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/secretbindings/aws", true},
		{"CredentialsBindings are read", http.MethodGet, "/apis/security.gardener.cloud/v1alpha1/namespaces/garden-kyma/credentialsbindings/aws", true},

		{"a real patch of a shoot is refused", http.MethodPatch, shoots + "/c-1?fieldManager=kim&force=true", false},
		{"a shoot is never updated", http.MethodPut, shoots + "/c-1", false},
		{"a shoot is never created", http.MethodPost, shoots, false},
		{"a shoot is never deleted, not even as a dry run", http.MethodDelete, shoots + "/c-1?dryRun=All", false},
		{"no admin kubeconfig is requested", http.MethodPost, shoots + "/c-1/adminkubeconfig", false},
		{"ConfigMaps are not written", http.MethodPut, "/api/v1/namespaces/garden-kyma/configmaps/structured-auth-c-1", false},
		{"Secrets are not read", http.MethodGet, "/api/v1/namespaces/garden-kyma/secrets/aws", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "https://garden.example"+tc.path, nil)
			next := &recorder{}
			_, err := RoundTripper(next, MigrationPolicy(ns)).RoundTrip(req)
			switch {
			case tc.allow && (err != nil || next.calls != 1):
				t.Errorf("%s %s: want sent, got err=%v calls=%d", tc.method, tc.path, err, next.calls)
			case !tc.allow && (!errors.Is(err, ErrRefused) || next.calls != 0):
				t.Errorf("%s %s: want refused before sending, got err=%v calls=%d", tc.method, tc.path, err, next.calls)
			}
		})
	}
}

// garden is a TLS test server counting the requests that reach it; it answers NotFound for everything.
func garden(t *testing.T) (*httptest.Server, *atomic.Int32, *rest.Config) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, &hits, &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// TestDeletingAProjectNeverReachesTheServer drives a real client-go client against a TLS server.
func TestDeletingAProjectNeverReachesTheServer(t *testing.T) {
	_, hits, cfg := garden(t)
	guarded, err := Secure(cfg, ProjectPolicy(ns))
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(guarded)
	if err != nil {
		t.Fatal(err)
	}
	projects := schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "projects"}
	err = client.Resource(projects).Delete(context.Background(), "kyma", metav1.DeleteOptions{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("delete project: want ErrRefused, got %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server received %d request(s); the guard must refuse before sending", n)
	}

	// The same client still reaches the server for what is allowed.
	shoots := schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	_, err = client.Resource(shoots).Namespace(ns).Get(context.Background(), "c-1", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get shoot: want the server's NotFound, got %v", err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the server received %d requests, want 1", n)
	}
}

func TestSecureRefusesUnverifiedConnections(t *testing.T) {
	_, _, cfg := garden(t)
	insecure := rest.CopyConfig(cfg)
	insecure.Insecure, insecure.CAData = true, nil
	plain := rest.CopyConfig(cfg)
	plain.Host = strings.Replace(cfg.Host, "https://", "http://", 1)
	for _, tc := range []struct {
		reason string
		cfg    *rest.Config
	}{
		{"insecure-skip-tls-verify disables certificate checks", insecure},
		{"plain http has no certificate at all", plain},
	} {
		if _, err := Secure(tc.cfg, ProjectPolicy(ns)); !errors.Is(err, ErrInsecureTLS) {
			t.Errorf("%s: want ErrInsecureTLS, got %v", tc.reason, err)
		}
	}
	if _, err := Secure(cfg, ProjectPolicy(ns)); err != nil {
		t.Errorf("a verified https connection must be accepted: %v", err)
	}
}

func TestLoadKubeconfigRefusesInsecureSkipTLSVerify(t *testing.T) {
	dir := t.TempDir()
	write := func(name, cluster string) string {
		p := filepath.Join(dir, name)
		kc := `apiVersion: v1
kind: Config
clusters:
- name: garden
  cluster:
    server: https://api.garden.example
` + cluster + `
users:
- name: sa
  user:
    token: abc
contexts:
- name: garden
  context: {cluster: garden, user: sa}
current-context: garden
`
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := LoadKubeconfig(write("insecure", "    insecure-skip-tls-verify: true"), ProjectPolicy(ns)); !errors.Is(err, ErrInsecureTLS) {
		t.Errorf("insecure kubeconfig: want ErrInsecureTLS, got %v", err)
	}
	cfg, err := LoadKubeconfig(write("secure", ""), ProjectPolicy(ns))
	if err != nil {
		t.Fatalf("secure kubeconfig: %v", err)
	}
	if cfg.WrapTransport == nil {
		t.Error("the loaded config carries no guard")
	}
}
