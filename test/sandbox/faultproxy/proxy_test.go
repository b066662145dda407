package faultproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// upstream is an API server stand-in: it records the Authorization header it saw and streams a watch forever.
func upstream(t *testing.T, auth *atomic.Value) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := fmt.Fprintln(w, `{"type":"BOOKMARK"}`); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// clientOf is an HTTP client configured as ClientConfig says.
func clientOf(t *testing.T, p *Proxy, timeout time.Duration) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(p.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = timeout
	return c
}

func start(t *testing.T, opts Options) (*Proxy, *atomic.Value) {
	t.Helper()
	auth := &atomic.Value{}
	srv := upstream(t, auth)
	p, err := New(&rest.Config{Host: srv.URL, BearerToken: "upstream-token"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, auth
}

func get(t *testing.T, c *http.Client, url string) (int, http.Header) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

func TestForwardsWithTheUpstreamCredentialsWhileFaultsAreOff(t *testing.T) {
	p, auth := start(t, Options{Share: 1})
	for range 5 {
		if code, _ := get(t, clientOf(t, p, 0), p.URL()+"/api"); code != http.StatusOK {
			t.Fatalf("faults off: status %d, want 200", code)
		}
	}
	if got := auth.Load(); got != "Bearer upstream-token" {
		t.Errorf("upstream saw Authorization %q, want the upstream config's token", got)
	}
	s := p.Stats()
	if s.Requests() != 5 || s.Forwarded != 5 || s.TotalFaults() != 0 {
		t.Errorf("stats %+v: want 5 requests, 5 forwarded, no faults", s)
	}
}

func TestFaultsAllKindsAtFullShare(t *testing.T) {
	p, _ := start(t, Options{Share: 1, RetryAfter: 3, HoldMax: 20 * time.Millisecond})
	p.Enable(true)
	seen := map[int]int{}
	for range 200 {
		code, h := get(t, clientOf(t, p, 0), p.URL()+"/api")
		seen[code]++
		if code == http.StatusTooManyRequests && h.Get("Retry-After") != "3" {
			t.Fatalf("429 with Retry-After %q, want 3", h.Get("Retry-After"))
		}
	}
	s := p.Stats()
	if s.Forwarded != 0 || seen[http.StatusOK] != 0 {
		t.Fatalf("share 1 forwarded %d requests (statuses %v)", s.Forwarded, seen)
	}
	want := map[Kind]int{KindTooManyRequests: seen[429], KindInternalError: seen[500], KindUnavailable: seen[503], KindHold: seen[504]}
	for k, n := range want {
		if n == 0 || s.Faults[k] != n {
			t.Errorf("kind %s: counted %d, clients saw %d (all statuses %v)", k, s.Faults[k], n, seen)
		}
	}
	if s.Requests() != 200 {
		t.Errorf("counted %d requests, want 200", s.Requests())
	}
	p.Enable(false)
	if code, _ := get(t, clientOf(t, p, 0), p.URL()+"/api"); code != http.StatusOK {
		t.Errorf("after switching off: status %d, want 200", code)
	}
}

func TestHoldsUntilTheClientGivesUp(t *testing.T) {
	p, _ := start(t, Options{Share: 1, HoldMax: time.Hour})
	p.Enable(true)
	c := clientOf(t, p, 100*time.Millisecond)
	holds := 0
	for range 40 {
		start := time.Now()
		code, _ := get(t, c, p.URL()+"/api")
		if code == 0 {
			holds++
			if d := time.Since(start); d < 100*time.Millisecond {
				t.Fatalf("held request ended after %s, before the client's timeout", d)
			}
		}
	}
	if holds == 0 || p.Stats().Faults[KindHold] != holds {
		t.Errorf("%d client timeouts, %d holds counted", holds, p.Stats().Faults[KindHold])
	}
}

func TestDropsWatchesAfterARandomTime(t *testing.T) {
	p, _ := start(t, Options{Share: 0, WatchDropMin: 100 * time.Millisecond, WatchDropMax: 300 * time.Millisecond})
	p.Enable(true)
	for range 3 {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/api/v1/pods?watch=true", nil)
		resp, err := clientOf(t, p, 0).Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		events := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "BOOKMARK") {
				events++
			}
		}
		_ = resp.Body.Close()
		clientTimeout := ctx.Err()
		cancel()
		d := time.Since(start)
		if clientTimeout != nil || d < 100*time.Millisecond || d > 5*time.Second || events == 0 {
			t.Fatalf("watch ended after %s with %d events (client timeout: %v), want a drop between 100ms and 300ms", d, events, clientTimeout)
		}
	}
	if s := p.Stats(); s.Faults[KindWatchDrop] != 3 || s.Watches != 3 {
		t.Errorf("counted %d watches and %d watch drops, want 3 of each", s.Watches, s.Faults[KindWatchDrop])
	}
}

func TestCountsRequestsPerSecond(t *testing.T) {
	p, _ := start(t, Options{})
	now := time.Unix(1000, 0)
	setNow := func(t time.Time) { p.mu.Lock(); p.now = func() time.Time { return t }; p.mu.Unlock() }
	setNow(now)
	for i := range 7 {
		if i == 4 {
			setNow(now.Add(time.Second))
		}
		get(t, clientOf(t, p, 0), p.URL()+"/api")
	}
	s := p.Stats()
	if s.PerSecond[1000] != 4 || s.PerSecond[1001] != 3 || len(s.Seconds()) != 2 {
		t.Errorf("per second %v, want 4 in 1000 and 3 in 1001", s.PerSecond)
	}
}

func TestRejectsAShareOutOfRange(t *testing.T) {
	for _, share := range []float64{-0.1, 1.5} {
		if _, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Share: share}); err == nil {
			t.Errorf("share %g accepted", share)
		}
	}
}

func TestPartitionDropsEveryRequestAndAbortsTheWatches(t *testing.T) {
	p, _ := start(t, Options{Audit: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/api/v1/pods?watch=true", nil)
	resp, err := clientOf(t, p, 0).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		close(ended)
	}()
	p.Partition(true)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch under way outlived the partition's start")
	}
	_ = resp.Body.Close()
	c := clientOf(t, p, 200*time.Millisecond)
	start := time.Now()
	if code, _ := get(t, c, p.URL()+"/api"); code != 0 || time.Since(start) < 200*time.Millisecond {
		t.Errorf("partitioned: status %d after %s, want no answer until the client gives up", code, time.Since(start))
	}
	if r, err := http.NewRequest(http.MethodPut, p.URL()+"/api/v1/namespaces/x/configmaps/y", strings.NewReader("{}")); err == nil {
		if resp, err := c.Do(r); err == nil {
			_ = resp.Body.Close()
			t.Errorf("partitioned: a write was answered %d", resp.StatusCode)
		}
	}
	if !p.Partitioned() {
		t.Error("Partitioned() false while cut off")
	}
	// A request held when the partition ends loses its connection, unanswered.
	held := make(chan int)
	go func() { code, _ := get(t, clientOf(t, p, 0), p.URL()+"/api"); held <- code }()
	time.Sleep(100 * time.Millisecond)
	p.Partition(false)
	if code := <-held; code != 0 {
		t.Errorf("request held across the partition's end answered %d, want dropped", code)
	}
	if code, _ := get(t, c, p.URL()+"/api"); code != http.StatusOK {
		t.Errorf("after the partition: status %d, want 200", code)
	}
	s := p.Stats()
	if s.Faults[KindPartition] != 4 {
		t.Errorf("counted %d partition drops, want 4 (the watch, two requests, the held one)", s.Faults[KindPartition])
	}
	// The dropped PUT is audited when its handler ends: when the proxy sees the client give up or the partition
	// end, either of which may come after the requests above were answered.
	w := p.Writes()
	for deadline := time.Now().Add(10 * time.Second); len(w) == 0 && time.Now().Before(deadline); w = p.Writes() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(w) != 1 || w[0].Forwarded || w[0].Code != 0 || w[0].Method != http.MethodPut {
		t.Errorf("audit %+v (waited up to 10 s for it): want the one PUT, not forwarded, unanswered", w)
	}
}

func TestAuditRecordsWritesWithTheirOutcome(t *testing.T) {
	p, _ := start(t, Options{Audit: true, Share: 1, KeepBody: func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/leases/") }})
	c := clientOf(t, p, 0)
	do := func(method, path, body string) int {
		req, err := http.NewRequest(method, p.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	do(http.MethodGet, "/api/v1/pods", "")
	do(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/n/leases/l", `{"spec":{"holderIdentity":"me"}}`)
	do(http.MethodDelete, "/api/v1/namespaces/n/secrets/s", "")
	p.Enable(true)
	p.opts.HoldMax = time.Millisecond
	code := do(http.MethodPatch, "/api/v1/namespaces/n/secrets/s", "{}")
	w := p.Writes()
	if len(w) != 3 {
		t.Fatalf("audit %+v: want the three writes, not the GET", w)
	}
	if w[0].Method != http.MethodPut || !w[0].Forwarded || w[0].Code != http.StatusOK || string(w[0].Body) != `{"spec":{"holderIdentity":"me"}}` {
		t.Errorf("lease write %+v: want forwarded, 200, its body kept", w[0])
	}
	if w[1].Method != http.MethodDelete || !w[1].Forwarded || w[1].Body != nil {
		t.Errorf("secret delete %+v: want forwarded, no body kept", w[1])
	}
	if w[2].Forwarded || w[2].Code != code || code == http.StatusOK {
		t.Errorf("faulted patch %+v (client saw %d): want not forwarded, the fault's status", w[2], code)
	}
	if w[0].At.IsZero() || w[2].At.Before(w[0].At) {
		t.Errorf("arrival times %s, %s", w[0].At, w[2].At)
	}
}
