package kube_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

const (
	kymaCRDPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + kube.KymaCRDName
	kymaPath    = "/apis/operator.kyma-project.io/v1beta2/namespaces/kyma-system/kymas/default"
)

// kymaRuntime plays a runtime's API server for the module choice: crd and kyma answer their paths (nil: 404),
// every other path is 404 and counted (the read must not need discovery).
func kymaRuntime(t *testing.T, crd, kyma http.HandlerFunc, limits registrycache.Limits) (*kube.RegistryCacheSource, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	notFound := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		h := http.HandlerFunc(notFound)
		switch {
		case r.URL.Path == kymaCRDPath && crd != nil:
			h = crd
		case r.URL.Path == kymaPath && kyma != nil:
			h = kyma
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: t}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", srv.URL)
	kcp := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-1")},
		Data: map[string][]byte{kubeconfig.SecretKey: []byte(kc)}}).Build()
	src := &kube.RegistryCacheSource{Clients: secretClients(kcp, "kcp-system"), Limits: limits}
	return src, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, paths...) }
}

func crdMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q}}`, kube.KymaCRDName)
}

func kymaWith(extra string, modules ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		list := make([]string, 0, len(modules))
		for _, m := range modules {
			list = append(list, fmt.Sprintf(`{"name":%q,"managed":true}`, m))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"apiVersion":"operator.kyma-project.io/v1beta2","kind":"Kyma","metadata":{"name":"default","namespace":"kyma-system"%s},"spec":{"channel":"regular","modules":[%s]}}`,
			extra, strings.Join(list, ","))
	}
}

// TestRegistryCacheSourceModuleEnabled: the module choice is read from the runtime's kyma-system/default, without
// discovery, bounded in bytes; only a missing Kyma CRD reads as disabled, a missing Kyma resource is an error.
func TestRegistryCacheSourceModuleEnabled(t *testing.T) {
	big := `,"annotations":{"a":"` + strings.Repeat("x", 128<<10) + `"}`
	for _, tc := range []struct {
		reason    string
		crd, kyma http.HandlerFunc
		want      bool
		wantErr   func(error) bool
		wantPaths []string
	}{
		{reason: "no Kyma CRD in the runtime: disabled", wantPaths: []string{kymaCRDPath}},
		{reason: "the Kyma CRD without kyma-system/default: an error, not disabled", crd: crdMetadata,
			wantErr: func(err error) bool { return err != nil && !errors.As(err, new(*registrycache.OverLimit)) }},
		{reason: "the module listed", crd: crdMetadata, kyma: kymaWith("", "istio", registrycache.ModuleName), want: true},
		{reason: "other modules only", crd: crdMetadata, kyma: kymaWith("", "istio", "registry-cache-x")},
		{reason: "a server error is transient", crd: crdMetadata, kyma: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, wantErr: func(err error) bool { return errors.Is(err, ports.ErrTransient) }},
		{reason: "a Kyma resource over the byte limit", crd: crdMetadata, kyma: kymaWith(big, registrycache.ModuleName),
			wantErr: isKymaTooLarge},
		{reason: "a CRD answer over the byte limit", crd: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q%s}}`, kube.KymaCRDName, big)
		}, wantErr: isKymaTooLarge, wantPaths: []string{kymaCRDPath}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			src, paths := kymaRuntime(t, tc.crd, tc.kyma, registrycache.Limits{MaxListBytes: 64 << 10})
			got, err := src.ModuleEnabled(t.Context(), "rt-1")
			switch {
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("err %v: not the error wanted", err)
			case tc.wantErr == nil && err != nil:
				t.Errorf("err %v, want none", err)
			case got != tc.want:
				t.Errorf("enabled %v, want %v", got, tc.want)
			}
			want := tc.wantPaths
			if want == nil {
				want = []string{kymaCRDPath, kymaPath}
			}
			if fmt.Sprint(paths()) != fmt.Sprint(want) {
				t.Errorf("requests %v, want %v (no discovery)", paths(), want)
			}
		})
	}
}

func isKymaTooLarge(err error) bool {
	var over *registrycache.OverLimit
	return errors.As(err, &over) && over.Reason == registrycache.ReasonKymaTooLarge
}
