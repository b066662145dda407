// Package faultproxy is a flaky Gardener for chaos tests and the sandbox: an HTTP reverse proxy in front of the
// garden API server that answers a configurable share of requests with 429 (and Retry-After), 500 or 503, holds
// some until the client gives up, and drops watch connections after a random time. It counts every request per
// second (to check a client's rate limit from the outside) and every fault by kind. Faults can be switched on and
// off while it runs. Clients talk HTTPS to it on the loopback interface (a certificate for 127.0.0.1 that
// ClientConfig trusts: the operator refuses a Gardener without verified TLS); it forwards upstream with a transport
// built from the upstream rest.Config, so authentication stays the upstream config's.
package faultproxy

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Kind is a kind of injected fault.
type Kind string

// The kinds of faults, the keys of Stats.Faults.
const (
	KindTooManyRequests Kind = "429"
	KindInternalError   Kind = "500"
	KindUnavailable     Kind = "503"
	KindHold            Kind = "hold"
	KindWatchDrop       Kind = "watch-drop"
)

// Options configure the faults.
type Options struct {
	// Share of requests (0..1) answered with a fault instead of being forwarded; the faulted ones are split
	// evenly between 429, 500, 503 and hold.
	Share float64
	// RetryAfter is the Retry-After of a 429 in whole seconds (default 1).
	RetryAfter int
	// HoldMax bounds a held request when the client does not give up first; it then gets 504 (default 10s).
	HoldMax time.Duration
	// WatchDropMin and WatchDropMax bound the random lifetime of a forwarded watch while faults are on
	// (defaults 2s and 30s). A watch is dropped by aborting its connection mid-stream.
	WatchDropMin, WatchDropMax time.Duration
}

func (o Options) withDefaults() Options {
	if o.RetryAfter <= 0 {
		o.RetryAfter = 1
	}
	if o.HoldMax <= 0 {
		o.HoldMax = 10 * time.Second
	}
	if o.WatchDropMin <= 0 {
		o.WatchDropMin = 2 * time.Second
	}
	if o.WatchDropMax < o.WatchDropMin {
		o.WatchDropMax = max(o.WatchDropMin, 30*time.Second)
	}
	return o
}

// Validate rejects a share outside 0..1.
func (o Options) Validate() error {
	if o.Share < 0 || o.Share > 1 {
		return fmt.Errorf("fault share %g: must be between 0 and 1", o.Share)
	}
	return nil
}

// Proxy is the fault proxy. Create it with New, stop it with Close.
type Proxy struct {
	opts     Options
	upstream *httputil.ReverseProxy
	server   *httptest.Server
	now      func() time.Time

	mu        sync.Mutex
	enabled   bool
	rnd       *rand.Rand
	perSecond map[int64]int
	faults    map[Kind]int
	forwarded int
	watches   int
}

// New starts a proxy on 127.0.0.1 (a free port) that forwards to the API server of upstream. Faults start
// switched off; see Enable.
func New(upstream *rest.Config, opts Options) (*Proxy, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	target, _, err := rest.DefaultServerUrlFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream URL: %w", err)
	}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream transport: %w", err)
	}
	p := &Proxy{opts: opts.withDefaults(), now: time.Now, rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		perSecond: map[int64]int{}, faults: map[Kind]int{}}
	p.upstream = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport: transport,
		// Watches stream: pass every event on at once.
		FlushInterval: -1,
		// Dropped watches and clients that give up are the point, not news.
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				// The client left or the watch is dropped before its headers came: abort the connection.
				panic(http.ErrAbortHandler)
			}
			http.Error(w, "fault proxy: upstream: "+err.Error(), http.StatusBadGateway)
		},
	}
	// httptest's server: TLS on 127.0.0.1 with a certificate of its own, which is all a loopback proxy needs.
	p.server = httptest.NewUnstartedServer(p)
	p.server.Config.ReadHeaderTimeout = 10 * time.Second
	p.server.Config.ErrorLog = log.New(io.Discard, "", 0) // clients killed mid-handshake are expected
	p.server.StartTLS()
	return p, nil
}

// URL is the proxy's address (https://127.0.0.1:port).
func (p *Proxy) URL() string { return p.server.URL }

// ClientConfig is a config for clients of the proxy: its address and certificate, no credentials (the proxy
// forwards with the upstream's).
func (p *Proxy) ClientConfig() *rest.Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.server.Certificate().Raw})
	return &rest.Config{Host: p.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// Close stops the proxy and closes every connection, held and watching ones too.
func (p *Proxy) Close() error {
	p.server.CloseClientConnections()
	p.server.Close()
	return nil
}

// Enable switches faults on or off.
func (p *Proxy) Enable(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enabled = on
}

// Enabled reports whether faults are on.
func (p *Proxy) Enabled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enabled
}

// ServeHTTP counts the request, then answers it with a fault or forwards it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, watchLife := p.decide(r)
	switch kind {
	case KindTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(p.opts.RetryAfter))
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "fault proxy: too many requests, retry later")
	case KindInternalError:
		writeStatus(w, http.StatusInternalServerError, "InternalError", "fault proxy: internal error")
	case KindUnavailable:
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "fault proxy: service unavailable")
	case KindHold:
		select {
		case <-r.Context().Done():
		case <-time.After(p.opts.HoldMax):
			writeStatus(w, http.StatusGatewayTimeout, "Timeout", "fault proxy: held until timeout")
		}
	default:
		if watchLife > 0 {
			client := r.Context()
			ctx, cancel := context.WithTimeout(client, watchLife)
			defer cancel()
			r = r.WithContext(ctx)
			// Deferred: the reverse proxy aborts the connection with a panic when the stream breaks.
			defer func() {
				if ctx.Err() == context.DeadlineExceeded && client.Err() == nil {
					p.count(KindWatchDrop)
				}
			}()
		}
		p.upstream.ServeHTTP(w, r)
	}
}

// decide counts the request and picks its fault (empty: forward) and, for a forwarded watch while faults are on,
// how long it may live.
func (p *Proxy) decide(r *http.Request) (Kind, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.perSecond[p.now().Unix()]++
	if !p.enabled {
		p.forwarded++
		return "", 0
	}
	if p.rnd.Float64() < p.opts.Share {
		kind := []Kind{KindTooManyRequests, KindInternalError, KindUnavailable, KindHold}[p.rnd.IntN(4)]
		p.faults[kind]++
		return kind, 0
	}
	p.forwarded++
	if isWatch(r) {
		p.watches++
		span := p.opts.WatchDropMax - p.opts.WatchDropMin
		return "", p.opts.WatchDropMin + time.Duration(p.rnd.Int64N(int64(span)+1))
	}
	return "", 0
}

func isWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

func (p *Proxy) count(k Kind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[k]++
}

// writeStatus answers with a Kubernetes Status object, as the API server does, so clients report the reason.
func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`, message, reason, code)
}
