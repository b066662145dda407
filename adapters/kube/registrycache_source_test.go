package kube_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

// customerAPIServer plays a runtime's API server that answers lists of RegistryCacheConfigs as the customer likes:
// page is called with the options of each list request and fills the list.
type customerAPIServer struct {
	mu    sync.Mutex
	calls []client.ListOptions
	page  func(call int, opts client.ListOptions, list *unstructured.UnstructuredList) error
}

func (s *customerAPIServer) source(limits registrycache.Limits) *kube.RegistryCacheSource {
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		List: func(_ context.Context, _ client.WithWatch, obj client.ObjectList, opts ...client.ListOption) error {
			o := client.ListOptions{}
			o.ApplyOptions(opts)
			s.mu.Lock()
			s.calls = append(s.calls, o)
			call := len(s.calls)
			s.mu.Unlock()
			if call > 100 {
				return errors.New("the client does not stop asking for pages")
			}
			return s.page(call, o, obj.(*unstructured.UnstructuredList))
		}}).Build()
	return &kube.RegistryCacheSource{Limits: limits,
		Clients: func(context.Context, string) (client.Client, error) { return c, nil }}
}

func rcc(name string) unstructured.Unstructured {
	u := unstructured.Unstructured{}
	u.SetGroupVersionKind(kube.RegistryCacheConfigGVK)
	u.SetNamespace("team")
	u.SetName(name)
	u.Object["spec"] = map[string]any{"upstream": name + ".example.com"}
	return u
}

func items(from, n int) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, 0, n)
	for i := range n {
		out = append(out, rcc(fmt.Sprintf("c%05d", from+i)))
	}
	return out
}

// TestRegistryCacheSourceLimits: the list of a runtime is paginated and bounded in objects, pages and bytes, whatever
// the runtime's API server answers; within the limits every page is read.
func TestRegistryCacheSourceLimits(t *testing.T) {
	limits := registrycache.Limits{MaxConfigs: 10, MaxListBytes: 64 << 10}
	for _, tc := range []struct {
		name      string
		page      func(call int, opts client.ListOptions, list *unstructured.UnstructuredList) error
		reason    registrycache.Reason // "": no limit hit
		wantRead  int
		wantCalls int
	}{
		{
			name: "within the limits every page is read, following the continue token",
			page: func(call int, opts client.ListOptions, list *unstructured.UnstructuredList) error {
				if call == 1 {
					list.Items, list.Object["metadata"] = items(0, 4), map[string]any{"continue": "page-2"}
					return nil
				}
				if opts.Continue != "page-2" {
					return fmt.Errorf("continue %q, want the token of page 1", opts.Continue)
				}
				list.Items = items(4, 3)
				return nil
			},
			wantRead: 7, wantCalls: 2,
		},
		{
			name: "more objects than the limit in one page (a server that ignores the page size)",
			page: func(_ int, _ client.ListOptions, list *unstructured.UnstructuredList) error {
				list.Items = items(0, 100)
				return nil
			},
			reason: registrycache.ReasonTooManyConfigs, wantRead: 10, wantCalls: 1,
		},
		{
			name: "more objects than the limit over pages",
			page: func(call int, _ client.ListOptions, list *unstructured.UnstructuredList) error {
				list.Items, list.Object["metadata"] = items(call*6, 6), map[string]any{"continue": fmt.Sprint("page-", call+1)}
				return nil
			},
			reason: registrycache.ReasonTooManyConfigs, wantRead: 10, wantCalls: 2,
		},
		{
			name: "a continue token without end, with empty pages",
			page: func(call int, _ client.ListOptions, list *unstructured.UnstructuredList) error {
				list.Object["metadata"] = map[string]any{"continue": fmt.Sprint("page-", call+1)}
				return nil
			},
			reason: registrycache.ReasonTooManyConfigs, wantCalls: registrycache.MaxPages(10),
		},
		{
			name: "an object larger than the bytes allowed",
			page: func(_ int, _ client.ListOptions, list *unstructured.UnstructuredList) error {
				big := rcc("big")
				big.SetAnnotations(map[string]string{"padding": strings.Repeat("x", 100<<10)})
				list.Items = append(items(0, 2), big)
				return nil
			},
			reason: registrycache.ReasonConfigsTooLarge, wantCalls: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &customerAPIServer{page: tc.page}
			cfgs, err := srv.source(limits).Configs(t.Context(), "rt-1")
			var over *registrycache.OverLimit
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("within the limits: %v", err)
			case tc.reason != "" && !errors.As(err, &over):
				t.Fatalf("err %v, want an OverLimit with %s", err, tc.reason)
			case tc.reason != "" && over.Reason != tc.reason:
				t.Fatalf("reason %s, want %s (%v)", over.Reason, tc.reason, err)
			}
			if len(cfgs) != tc.wantRead || len(srv.calls) != tc.wantCalls {
				t.Errorf("%d configs in %d requests, want %d in %d", len(cfgs), len(srv.calls), tc.wantRead, tc.wantCalls)
			}
			for i, o := range srv.calls {
				if o.Limit != registrycache.PageSize(limits.MaxConfigs) {
					t.Errorf("request %d: limit %d, want the page size %d", i+1, o.Limit, registrycache.PageSize(limits.MaxConfigs))
				}
			}
			if over != nil && !strings.Contains(over.Detail, "registryCache.max") {
				t.Errorf("message %q names no config key", over.Detail)
			}
		})
	}
}

// TestRegistryCacheSourceBreakOffIsNoEmptyList: a list whose second page is not found is an error, never "no
// objects" (which would remove every cache of the runtime).
func TestRegistryCacheSourceBreakOffIsNoEmptyList(t *testing.T) {
	srv := &customerAPIServer{page: func(call int, _ client.ListOptions, list *unstructured.UnstructuredList) error {
		if call == 1 {
			list.Items, list.Object["metadata"] = items(0, 3), map[string]any{"continue": "page-2"}
			return nil
		}
		return apierrors.NewNotFound(schema.GroupResource{Group: "core.kyma-project.io", Resource: "registrycacheconfigs"}, "")
	}}
	cfgs, err := srv.source(registrycache.Limits{MaxConfigs: 10}).Configs(t.Context(), "rt-1")
	if err == nil || cfgs != nil {
		t.Fatalf("configs %v, err %v: want an error and no configs", cfgs, err)
	}
	srv = &customerAPIServer{page: func(int, client.ListOptions, *unstructured.UnstructuredList) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: "core.kyma-project.io", Resource: "registrycacheconfigs"}, "")
	}}
	if cfgs, err := srv.source(registrycache.Limits{}).Configs(t.Context(), "rt-1"); err != nil || cfgs != nil {
		t.Errorf("not found at once (module not installed): %v, %v, want none and no error", cfgs, err)
	}
}

// wireServer is a runtime API server on HTTP whose list of RegistryCacheConfigs handler answers; it counts all
// requests by path, and makes sources that reach it through RuntimeClients (secretClients).
func wireServer(t *testing.T, handler http.HandlerFunc) (func() map[string]int, func(registrycache.Limits, time.Duration) *kube.RegistryCacheSource) {
	t.Helper()
	var mu sync.Mutex
	paths := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path != "/apis/core.kyma-project.io/v1beta1/registrycacheconfigs" {
			http.NotFound(w, r)
			return
		}
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	kcp := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-1")},
		Data: map[string][]byte{kubeconfig.SecretKey: kube.TestKubeconfig(srv.URL)}}).Build()
	clients := secretClients(kcp, "kcp-system")
	mk := func(l registrycache.Limits, timeout time.Duration) *kube.RegistryCacheSource {
		return &kube.RegistryCacheSource{Clients: clients, Limits: l, ListTimeout: timeout}
	}
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range paths {
			out[k] = v
		}
		return out
	}, mk
}

// endlessList writes the start of a list and then items until the client stops reading (or n bytes).
func endlessList(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"apiVersion":"core.kyma-project.io/v1beta1","kind":"RegistryCacheConfigList","metadata":{},"items":[`)
	item := `{"apiVersion":"core.kyma-project.io/v1beta1","kind":"RegistryCacheConfig","metadata":{"name":"x","namespace":"team","annotations":{"p":"` +
		strings.Repeat("x", 8<<10) + `"}},"spec":{"upstream":"docker.io"}}`
	for written := 0; written < n; written += len(item) + 1 {
		if written > 0 {
			_, _ = fmt.Fprint(w, ",")
		}
		if _, err := fmt.Fprint(w, item); err != nil {
			return
		}
	}
	_, _ = fmt.Fprint(w, `]}`)
}

// TestRegistryCacheSourceBoundsBytesOnTheWire: with the clients of RuntimeClients the bytes allowed hold
// while the body is read, before client-go holds it in memory: a 64 MiB answer, plain, gzip-compressed (counted
// as decompressed) or announced by Content-Length, costs the operator about the budget, not the answer. The list
// asks the runtime nothing else (no discovery, whose size the customer controls too).
func TestRegistryCacheSourceBoundsBytesOnTheWire(t *testing.T) {
	const offered = 64 << 20
	var gzipped bytes.Buffer
	zw := gzip.NewWriter(&gzipped)
	endlessList(gzipWriter{zw}, offered)
	_ = zw.Close()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"streamed", func(w http.ResponseWriter, _ *http.Request) { endlessList(w, offered) }},
		{"gzip bomb", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzipped.Bytes())
		}},
		{"announced", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(offered))
			endlessList(w, offered)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths, mk := wireServer(t, tc.handler)
			src := mk(registrycache.Limits{MaxListBytes: 1 << 20}, 0)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := src.Configs(t.Context(), "rt-1")
			runtime.ReadMemStats(&after)
			var over *registrycache.OverLimit
			if !errors.As(err, &over) || over.Reason != registrycache.ReasonConfigsTooLarge {
				t.Fatalf("err %v, want ConfigsTooLarge", err)
			}
			// The budget is 1 MiB; reading the 64 MiB answer would allocate at least 64 MiB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("the list allocated %d MiB for a budget of 1 MiB", alloc>>20)
			}
			if got := paths(); len(got) != 1 || got["/apis/core.kyma-project.io/v1beta1/registrycacheconfigs"] != 1 {
				t.Errorf("requests %v, want the one list request", got)
			}
		})
	}
}

type gzipWriter struct{ *gzip.Writer }

func (gzipWriter) Header() http.Header { return http.Header{} }
func (gzipWriter) WriteHeader(int)     {}

// TestRegistryCacheSourceListTimeout: a runtime whose API server does not finish its answer holds the sync for
// ListTimeout, not for the requests' 15 s each: the sync of other runtimes waits for no more than that worker.
func TestRegistryCacheSourceListTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, mk := wireServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"kind":"RegistryCacheConfigList","items":[`)
		w.(http.Flusher).Flush()
		<-release
	})
	start := time.Now()
	_, err := mk(registrycache.Limits{}, 300*time.Millisecond).Configs(t.Context(), "rt-1")
	if !errors.Is(err, ports.ErrRuntimeUnreachable) {
		t.Errorf("err %v, want ErrRuntimeUnreachable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the list took %s with a list timeout of 300ms", d)
	}
}
