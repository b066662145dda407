package kube_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// oversized answers every request with a JSON document of n bytes (a discovery document or a Secret whose size the
// runtime's admin controls), announced by Content-Length or streamed.
func oversized(t *testing.T, n int, announce bool) (kc []byte, requests func() int) {
	t.Helper()
	count := 0
	pad := strings.Repeat("x", 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		count++
		w.Header().Set("Content-Type", "application/json")
		head, tail := `{"kind":"APIVersions","apiVersion":"v1","versions":["v1"],"serverAddressByClientCIDRs":[],"p":"`, `"}`
		if announce {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		if _, err := fmt.Fprint(w, head); err != nil {
			return
		}
		for written := len(head) + len(tail); written < n; written += len(pad) {
			if _, err := fmt.Fprint(w, pad[:min(len(pad), n-written)]); err != nil {
				return // the client stopped reading
			}
		}
		_, _ = fmt.Fprint(w, tail)
	}))
	t.Cleanup(srv.Close)
	return kube.TestKubeconfig(srv.URL), func() int { return count }
}

// discoveryOf is a discovery client built as the operator builds runtime clients (RESTConfigFromRuntimeKubeconfig).
func discoveryOf(t *testing.T, kc []byte) *discovery.DiscoveryClient {
	t.Helper()
	cfg, err := kube.RESTConfigFromRuntimeKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRuntimeResponsesHaveAByteBudget: every client of a runtime (RESTConfigFromRuntimeKubeconfig, which the
// operator's RuntimeClients, `kim migrate` and the probe build on) reads a response of the runtime within
// MaxRuntimeResponseBytes, on the wire: a 64 MiB discovery document, streamed or announced, is an error (never
// truncated data) and costs about the budget, not the answer. A request that carries no budget of its own, such as
// discovery, is bounded too.
func TestRuntimeResponsesHaveAByteBudget(t *testing.T) {
	const offered = 64 << 20
	for _, announce := range []bool{false, true} {
		t.Run(fmt.Sprintf("discovery, announced=%v", announce), func(t *testing.T) {
			kc, _ := oversized(t, offered, announce)
			d := discoveryOf(t, kc)
			var err error
			alloc := allocated(func() { _, err = d.ServerVersion() })
			if err == nil || !strings.Contains(err.Error(), "exceed the bytes allowed") {
				t.Fatalf("a 64 MiB discovery answer: %v, want the budget's error", err)
			}
			if limit := uint64(4 * kube.MaxRuntimeResponseBytes); alloc > limit {
				t.Errorf("reading it allocated %d MiB, want at most %d MiB", alloc>>20, limit>>20)
			}
		})
	}
	t.Run("a Secret read by the runtime clients", func(t *testing.T) {
		kc, requests := oversized(t, offered, false)
		kcp := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-1")},
			Data: map[string][]byte{kubeconfig.SecretKey: kc}}).Build()
		c, err := secretClients(kcp, "kcp-system")(t.Context(), "rt-1")
		if err != nil {
			t.Fatal(err)
		}
		alloc := allocated(func() {
			err = c.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "s"}, &corev1.Secret{})
		})
		if err == nil || !strings.Contains(err.Error(), "exceed the bytes allowed") {
			t.Fatalf("a 64 MiB Secret: %v, want the budget's error", err)
		}
		if limit := uint64(4 * kube.MaxRuntimeResponseBytes); alloc > limit {
			t.Errorf("reading it allocated %d MiB, want at most %d MiB", alloc>>20, limit>>20)
		}
		if n := requests(); n != 1 {
			t.Errorf("%d requests, want 1 (the budget's error is not retried)", n)
		}
	})
	t.Run("an answer within the budget", func(t *testing.T) {
		kc, _ := oversized(t, 1<<20, false)
		if _, err := discoveryOf(t, kc).ServerVersion(); err != nil {
			t.Errorf("a 1 MiB answer: %v, want it read", err)
		}
	})
}
