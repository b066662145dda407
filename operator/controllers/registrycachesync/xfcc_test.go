package registrycachesync

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
)

const (
	gatewayPrincipal  = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"
	operatorPrincipal = "cluster.local/ns/kcp-system/sa/kim-controller-manager"
	intruderPrincipal = "cluster.local/ns/kcp-system/sa/some-other-workload"
)

// sidecarElement is the element the operator pod's Istio sidecar appends (APPEND_FORWARD; Subject, URI and DNS of
// the peer, Hash; By = the pod's own identity) for an mTLS connection from peer.
func sidecarElement(peer string) string {
	return `By=spiffe://` + operatorPrincipal + `;Hash=6c1ee5b0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c;Subject="";URI=spiffe://` + peer
}

// TestXFCCIdentityFromTheTrustedHop: the runtime ID comes only from the element the trusted hop wrote: with a
// sidecar, the gateway's element right before the sidecar's own (which must name this pod and the gateway); without
// one, the last element. A caller's elements in front of it, a forged sidecar element, or none of the gateway's
// never name the runtime.
func TestXFCCIdentityFromTheTrustedHop(t *testing.T) {
	sidecar := Trust{GatewayPrincipal: gatewayPrincipal, OperatorPrincipal: operatorPrincipal}
	noSidecar := Trust{GatewayPrincipal: gatewayPrincipal}
	victim := "5a1b2c3d-0000-4000-8000-0000000000aa"
	for _, tc := range []struct {
		reason string
		trust  Trust
		header func(t *testing.T) []string
		want   string // runtime ID; "" = refused
	}{
		{reason: "sidecar: the gateway's element, then the sidecar's", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, knownRuntime) + "," + sidecarElement(gatewayPrincipal)}
			},
			want: knownRuntime},
		{reason: "sidecar: a forged first element, then the gateway's and the sidecar's: the gateway's counts", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + gatewayElement(t, knownRuntime) + "," + sidecarElement(gatewayPrincipal)}
			},
			want: knownRuntime},
		{reason: "sidecar: a forged element sent past the gateway: the sidecar names another peer", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + sidecarElement(intruderPrincipal)}
			}},
		{reason: "sidecar: a forged gateway hop in front of the sidecar's element for another peer", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + sidecarElement(gatewayPrincipal) + "," + sidecarElement(intruderPrincipal)}
			}},
		{reason: "sidecar: no element of the gateway", trust: sidecar,
			header: func(*testing.T) []string { return []string{sidecarElement(gatewayPrincipal)} }},
		{reason: "sidecar: a plaintext caller's whole header (no sidecar element last)", trust: sidecar,
			header: func(t *testing.T) []string { return []string{gatewayElement(t, victim)} }},
		{reason: "sidecar: the last element names another pod", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + strings.Replace(sidecarElement(gatewayPrincipal), operatorPrincipal, intruderPrincipal, 1)}
			}},
		{reason: "sidecar: two URIs in the sidecar's element", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + sidecarElement(gatewayPrincipal) + ";URI=spiffe://" + intruderPrincipal}
			}},
		{reason: "no sidecar: a forged first element, then the gateway's: the gateway's (last) counts", trust: noSidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, victim) + "," + gatewayElement(t, knownRuntime)}
			},
			want: knownRuntime},
		{reason: "several certificates in the trusted element", trust: noSidecar,
			header: func(t *testing.T) []string {
				second := gatewayElement(t, victim)
				return []string{gatewayElement(t, knownRuntime) + ";" + second[strings.Index(second, "Cert="):]}
			}},
		{reason: "a second header line", trust: noSidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, knownRuntime), gatewayElement(t, victim)}
			}},
		{reason: "quoted values with ',', ';', '=' and escaped quotes stay in their element", trust: sidecar,
			header: func(t *testing.T) []string {
				e := strings.Replace(gatewayElement(t, knownRuntime), `Subject="CN=`, `Subject="O=\"a;b,c=d\",CN=`, 1)
				return []string{e + "," + sidecarElement(gatewayPrincipal)}
			},
			want: knownRuntime},
		{reason: "a comma inside quotes does not open an element", trust: sidecar,
			header: func(t *testing.T) []string {
				return []string{gatewayElement(t, knownRuntime) + `;DNS="x,` + sidecarElement(gatewayPrincipal) + `"`}
			}},
		{reason: "an unterminated quote", trust: noSidecar,
			header: func(t *testing.T) []string { return []string{gatewayElement(t, knownRuntime) + `;Subject="CN=x`} }},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			l, _ := newListener(t, &recorder{})
			l.Trust = tc.trust
			h := http.Header{}
			for _, v := range tc.header(t) {
				h.Add(XFCCHeader, v)
			}
			got, _, err := l.identify(h)
			if tc.want == "" && err == nil {
				t.Fatalf("runtime %q taken; want refused", got)
			}
			if tc.want != "" && (err != nil || got != tc.want) {
				t.Fatalf("runtime %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func postEvent(l *Listener, header string) int {
	req := httptest.NewRequest(http.MethodPost, WatcherPath, strings.NewReader(watcherBody))
	req.Header.Set(XFCCHeader, header)
	w := httptest.NewRecorder()
	l.ServeHTTP(w, req)
	return w.Code
}

// checkSevenOfTenRefused posts ten events with header to a listener whose budget (burst 3) has no refill: three are
// answered, seven refused with 429 and counted under outcome.
func checkSevenOfTenRefused(t *testing.T, l *Listener, m *Metrics, header, outcome string) {
	t.Helper()
	codes := map[int]int{}
	for range 10 {
		codes[postEvent(l, header)]++
	}
	if codes[http.StatusOK] != 3 || codes[http.StatusTooManyRequests] != 7 {
		t.Errorf("answers %v, want 3 taken and 7 refused with 429", codes)
	}
	if got := testutil.ToFloat64(m.watcher.WithLabelValues(outcome)); got != 7 {
		t.Errorf("%s %v, want 7", outcome, got)
	}
}

// TestWatcherListenerUnknownRuntimesCostNothingShared: a flood of certificates with made-up runtime IDs spends
// none of the global budget (a known runtime's event is queued after it), and one certificate's flood is stopped by
// its own budget while another certificate goes on.
func TestWatcherListenerUnknownRuntimesCostNothingShared(t *testing.T) {
	rec := &recorder{}
	l, m := newListener(t, rec)
	l.Limiter = rate.NewLimiter(rate.Every(time.Hour), 1)
	l.SourceLimiter = NewKeyedLimiter(rate.Every(time.Hour), 3, 50)
	l.Coalesce = time.Hour
	for i := range 100 {
		if code := postEvent(l, xfcc(t, fmt.Sprintf("5a1b2c3d-0000-4000-8000-%012d", 1000+i))); code != http.StatusOK {
			t.Fatalf("unknown runtime %d: status %d, want 200", i, code)
		}
	}
	if n := l.SourceLimiter.Len(); n > 50 {
		t.Errorf("%d sources remembered, want at most 50", n)
	}
	if code := postEvent(l, xfcc(t, knownRuntime)); code != http.StatusOK || len(rec.calls()) != 1 {
		t.Fatalf("the known runtime after the flood: status %d, queued %v; want 200 and one sync", code, rec.calls())
	}
	flooder := xfcc(t, "5a1b2c3d-0000-4000-8000-0000000000ff")
	checkSevenOfTenRefused(t, l, m, flooder, EventSourceLimited)
	if got := testutil.ToFloat64(m.watcher.WithLabelValues(EventRateLimited)); got != 0 {
		t.Errorf("rate_limited %v, want 0: the global budget was never reached", got)
	}
}

// TestWatcherListenerRuntimeWindowBeforeGlobalBudget: one runtime's events within its window spend the global
// budget once, so another runtime's event is still queued; a forged stream of one runtime's events is one sync per
// window (plus the trailing one).
func TestWatcherListenerRuntimeWindowBeforeGlobalBudget(t *testing.T) {
	rec := &recorder{}
	l, m := newListener(t, rec)
	l.Limiter = rate.NewLimiter(rate.Every(time.Hour), 2)
	l.Coalesce = time.Hour
	for i := range 50 {
		if code := postEvent(l, xfcc(t, knownRuntime)); code != http.StatusOK {
			t.Fatalf("event %d of the runtime: status %d, want 200", i, code)
		}
	}
	if code := postEvent(l, xfcc(t, otherRuntime)); code != http.StatusOK {
		t.Fatalf("the other runtime's event: status %d, want 200", code)
	}
	want := "kcp-system/" + knownRuntime + ",kcp-system/" + otherRuntime
	if got := strings.Join(rec.calls(), ","); got != want {
		t.Errorf("queued %s, want %s", got, want)
	}
	if got := testutil.ToFloat64(m.watcher.WithLabelValues(EventCoalesced)); got != 49 {
		t.Errorf("coalesced %v, want 49", got)
	}
}

// TestKeyedLimiterForgetsTheLeastRecentlyUsed: the map stays within its bound, and a key used recently keeps its
// (spent) bucket while the oldest is forgotten.
func TestKeyedLimiterForgetsTheLeastRecentlyUsed(t *testing.T) {
	k := NewKeyedLimiter(rate.Every(time.Hour), 1, 2)
	if !k.Allow("a") || !k.Allow("b") || k.Allow("a") {
		t.Fatal("a fresh key has one token, a spent one none")
	}
	if !k.Allow("c") { // forgets b, the least recently used
		t.Fatal("c refused")
	}
	if k.Len() != 2 {
		t.Errorf("%d keys remembered, want 2", k.Len())
	}
	if k.Allow("a") {
		t.Error("a was forgotten; it was used more recently than b")
	}
	if !k.Allow("b") {
		t.Error("b should start again with a full bucket")
	}
}
