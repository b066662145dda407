package health

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
)

// fakeGarden is a TLS server whose /healthz answers with the current code and body.
type fakeGarden struct {
	srv  *httptest.Server
	code atomic.Int32
	body atomic.Value
	hits atomic.Int32
}

func newFakeGarden(t *testing.T) (*fakeGarden, *rest.Config) {
	t.Helper()
	g := &fakeGarden{}
	g.code.Store(http.StatusOK)
	g.body.Store("ok")
	g.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		if r.URL.Path != "/healthz" || r.Header.Get("Authorization") != "Bearer secret-token" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.WriteHeader(int(g.code.Load()))
		_, _ = w.Write([]byte(g.body.Load().(string)))
	}))
	t.Cleanup(g.srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: g.srv.Certificate().Raw})
	return g, &rest.Config{Host: g.srv.URL, BearerToken: "secret-token", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// series renders the gauge in the exposition format for comparison.
func expectSeries(t *testing.T, reg *prometheus.Registry, url string, current Status) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# HELP kim_gardener_health Result of the last Gardener API health check: the series with the current status is 1, the others 0.\n")
	b.WriteString("# TYPE kim_gardener_health gauge\n")
	for _, s := range []Status{StatusError, StatusHealthy, StatusUnknown} {
		v := "0"
		if s == current {
			v = "1"
		}
		b.WriteString(`kim_gardener_health{status="` + string(s) + `",url="` + url + `"} ` + v + "\n")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()), "kim_gardener_health"); err != nil {
		t.Errorf("want exactly one series at 1 (%s): %v", current, err)
	}
}

func TestCheckOnce(t *testing.T) {
	for _, tc := range []struct {
		reason string
		code   int
		body   string
		closed bool
		want   Status
	}{
		{reason: "the API server answers ok", code: http.StatusOK, body: "ok", want: StatusHealthy},
		{reason: "a failing health check (etcd down) is an error", code: http.StatusInternalServerError, body: "[-]etcd failed", want: StatusError},
		{reason: "a 200 that is not the API server's ok (e.g. a proxy page) is an error", code: http.StatusOK, body: "<html>", want: StatusError},
		{reason: "an unreachable server is an error", closed: true, want: StatusError},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			g, cfg := newFakeGarden(t)
			reg := prometheus.NewRegistry()
			c, err := NewGardenerChecker(cfg, reg)
			if err != nil {
				t.Fatal(err)
			}
			expectSeries(t, reg, g.srv.URL, StatusUnknown)
			g.code.Store(int32(tc.code))
			g.body.Store(tc.body)
			if tc.closed {
				g.srv.Close()
			}
			if got := c.CheckOnce(context.Background()); got != tc.want {
				t.Errorf("CheckOnce = %s, want %s", got, tc.want)
			}
			expectSeries(t, reg, g.srv.URL, tc.want)
		})
	}
}

func TestCheckerRecovers(t *testing.T) {
	g, cfg := newFakeGarden(t)
	reg := prometheus.NewRegistry()
	c, err := NewGardenerChecker(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	g.code.Store(http.StatusServiceUnavailable)
	if got := c.CheckOnce(context.Background()); got != StatusError {
		t.Fatalf("first check = %s, want error", got)
	}
	g.code.Store(http.StatusOK)
	if got := c.CheckOnce(context.Background()); got != StatusHealthy {
		t.Fatalf("second check = %s, want healthy", got)
	}
	expectSeries(t, reg, g.srv.URL, StatusHealthy)
}

func TestStartChecksImmediatelyAndStopsWithContext(t *testing.T) {
	g, cfg := newFakeGarden(t)
	c, err := NewGardenerChecker(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c.Interval = time.Hour // only the immediate check runs during the test
	if c.NeedLeaderElection() {
		t.Error("standby replicas must report health too")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	deadline := time.After(10 * time.Second)
	for c.Status() != StatusHealthy {
		select {
		case <-deadline:
			t.Fatalf("no health check within 10s (status %s, %d requests)", c.Status(), g.hits.Load())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	if n := g.hits.Load(); n != 1 {
		t.Errorf("%d requests, want exactly the immediate one", n)
	}
}

func TestSecondCheckerSharesTheGauge(t *testing.T) {
	g1, cfg1 := newFakeGarden(t)
	g2, cfg2 := newFakeGarden(t)
	reg := prometheus.NewRegistry()
	c1, err := NewGardenerChecker(cfg1, reg)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := NewGardenerChecker(cfg2, reg)
	if err != nil {
		t.Fatalf("a second manager in the same process must be able to register: %v", err)
	}
	g2.code.Store(http.StatusInternalServerError)
	c1.CheckOnce(context.Background())
	c2.CheckOnce(context.Background())
	if n := testutil.CollectAndCount(c1.gauge); n != 6 {
		t.Errorf("%d series, want 3 per URL", n)
	}
	for url, want := range map[string]Status{g1.srv.URL: StatusHealthy, g2.srv.URL: StatusError} {
		if v := testutil.ToFloat64(c1.gauge.WithLabelValues(url, string(want))); v != 1 {
			t.Errorf("%s: series %s = %g, want 1", url, want, v)
		}
	}
}
