package registrycachesync

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

const (
	knownRuntime = "5a1b2c3d-0000-4000-8000-000000000001"
	otherRuntime = "5a1b2c3d-0000-4000-8000-000000000002"
)

// xfcc is the element the ingress gateway (SANITIZE_SET) writes for a verified client certificate with common name
// cn: the only element of the header when the operator pod has no sidecar.
func xfcc(t *testing.T, cn string) string {
	t.Helper()
	return gatewayElement(t, cn)
}

// gatewayElement is the element Envoy writes at the gateway for a client certificate with common name cn (keys as
// Istio sets them for a gateway: Subject, Cert, URI, DNS, plus Hash).
func gatewayElement(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, Organization: []string{"SAP SE"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return `Hash=` + hex.EncodeToString(sum[:]) + `;Cert="` + url.QueryEscape(string(p)) + `";Subject="CN=` + cn + `,O=SAP SE";URI=`
}

// recorder is an Enqueuer that records the runtimes it was asked to sync.
type recorder struct {
	mu   sync.Mutex
	got  []string
	fail error
}

func (r *recorder) enqueue(_ context.Context, ns, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, ns+"/"+id)
	return nil
}

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.got...)
}

func newListener(t *testing.T, rec *recorder) (*Listener, *Metrics) {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	kcp := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: knownRuntime}},
		&imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: otherRuntime}}).Build()
	m := NewMetrics(prometheus.NewRegistry())
	return &Listener{Runtimes: kcp, Namespaces: []string{"kcp-system"}, Enqueue: rec.enqueue, Metrics: m}, m
}

const watcherBody = `{"watched":{"Namespace":"team","Name":"docker"},"watchedGvk":{"group":"core.kyma-project.io","version":"v1beta1","kind":"RegistryCacheConfig"}}`

// TestWatcherListener: only a POST of at most 16 KiB with a client certificate whose common name is a runtime ID is
// taken; a known runtime is queued, an unknown one is answered alike and queues nothing.
func TestWatcherListener(t *testing.T) {
	for _, tc := range []struct {
		reason      string
		method      string
		header      func(t *testing.T) string // X-Forwarded-Client-Cert; nil: none
		body        string
		wantCode    int
		wantOutcome string
		wantQueued  []string
	}{
		{reason: "a watcher event of a known runtime is queued", header: func(t *testing.T) string { return xfcc(t, knownRuntime) },
			wantCode: http.StatusOK, wantOutcome: EventQueued, wantQueued: []string{"kcp-system/" + knownRuntime}},
		{reason: "lower-case keys are the same event", header: func(t *testing.T) string { return xfcc(t, knownRuntime) },
			body:     `{"watched":{"namespace":"team","name":"docker"},"watchedGvk":{"kind":"Kyma"}}`,
			wantCode: http.StatusOK, wantOutcome: EventQueued, wantQueued: []string{"kcp-system/" + knownRuntime}},
		{reason: "an unknown runtime is answered like a known one and queues nothing",
			header:   func(t *testing.T) string { return xfcc(t, "5a1b2c3d-0000-4000-8000-0000000000ff") },
			wantCode: http.StatusOK, wantOutcome: EventUnknownRuntime},
		{reason: "no client certificate", wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a header without a certificate", header: func(*testing.T) string { return `By=spiffe://x;Hash=abc` },
			wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a certificate that is no PEM", header: func(*testing.T) string { return `Cert="` + url.QueryEscape("not a cert") + `"` },
			wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a certificate without a common name", header: func(t *testing.T) string { return xfcc(t, "") },
			wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a common name that is no runtime ID", header: func(t *testing.T) string { return xfcc(t, "../kubeconfig-x") },
			wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a header over 32 KiB", header: func(t *testing.T) string { return xfcc(t, knownRuntime) + strings.Repeat("x", 32<<10) },
			wantCode: http.StatusUnauthorized, wantOutcome: EventUnauthenticated},
		{reason: "a body over 16 KiB", header: func(t *testing.T) string { return xfcc(t, knownRuntime) },
			body: `{"watched":{"name":"` + strings.Repeat("x", MaxEventBytes) + `"}}`, wantCode: http.StatusRequestEntityTooLarge, wantOutcome: EventTooLarge},
		{reason: "a body that is no event", header: func(t *testing.T) string { return xfcc(t, knownRuntime) },
			body: `not json`, wantCode: http.StatusBadRequest, wantOutcome: EventBadRequest},
		{reason: "GET is not allowed", method: http.MethodGet, header: func(t *testing.T) string { return xfcc(t, knownRuntime) },
			wantCode: http.StatusMethodNotAllowed, wantOutcome: EventMethodNotAllowed},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rec := &recorder{}
			l, m := newListener(t, rec)
			body := tc.body
			if body == "" {
				body = watcherBody
			}
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, WatcherPath, strings.NewReader(body))
			if tc.header != nil {
				req.Header.Set(XFCCHeader, tc.header(t))
			}
			w := httptest.NewRecorder()
			l.ServeHTTP(w, req)
			if w.Code != tc.wantCode {
				t.Errorf("status %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tc.wantCode)
			}
			if got := testutil.ToFloat64(m.watcher.WithLabelValues(tc.wantOutcome)); got != 1 {
				t.Errorf("kim_registry_cache_watcher_events_total{outcome=%q} = %v, want 1", tc.wantOutcome, got)
			}
			if got := rec.calls(); strings.Join(got, ",") != strings.Join(tc.wantQueued, ",") {
				t.Errorf("queued %v, want %v", got, tc.wantQueued)
			}
		})
	}
}

// TestWatcherListenerBoundsLoad: a flood of events is rate limited, and the events of one runtime within the
// coalescing window are one sync now and one at the window's end, not one each.
func TestWatcherListenerBoundsLoad(t *testing.T) {
	post := postEvent
	cert := xfcc(t, knownRuntime)
	t.Run("rate limited", func(t *testing.T) {
		rec := &recorder{}
		l, m := newListener(t, rec)
		l.Limiter = rate.NewLimiter(rate.Every(time.Hour), 3)
		checkSevenOfTenRefused(t, l, m, cert, EventRateLimited)
	})
	t.Run("coalesced per runtime", func(t *testing.T) {
		rec := &recorder{}
		l, m := newListener(t, rec)
		l.Coalesce = 200 * time.Millisecond
		for range 20 {
			if code := post(l, cert); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
		}
		if got := rec.calls(); len(got) != 1 {
			t.Fatalf("queued %v at once, want one sync", got)
		}
		if got := testutil.ToFloat64(m.watcher.WithLabelValues(EventCoalesced)); got != 19 {
			t.Errorf("coalesced %v, want 19", got)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(rec.calls()) < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := rec.calls(); len(got) != 2 {
			t.Errorf("queued %v after the window, want the one trailing sync too", got)
		}
	})
	t.Run("a failed enqueue is 503", func(t *testing.T) {
		rec := &recorder{fail: errors.New("queue full")}
		l, _ := newListener(t, rec)
		if code := post(l, cert); code != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", code)
		}
	})
}
