// Package faultproxy is a flaky Gardener for chaos tests and the sandbox: an HTTP reverse proxy in front of the
// garden API server that answers a configurable share of requests with 429 (and Retry-After), 500 or 503, holds
// some until the client gives up, and drops watch connections after a random time. It counts every request per
// second (to check a client's rate limit from the outside) and every fault by kind. Faults can be switched on and
// off while it runs. It can also cut its client off entirely (Partition), and keep an audit of the client's writes
// (Options.Audit): with one proxy per client, the audit says which client wrote what, and when. Clients talk HTTPS to it on the loopback interface (a certificate for 127.0.0.1 that
// ClientConfig trusts: the operator refuses a Gardener without verified TLS); it forwards upstream with a transport
// built from the upstream rest.Config, so authentication stays the upstream config's.
package faultproxy

import (
	"bytes"
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
	// KindPartition counts the requests dropped while the client was cut off (Partition), those under way included.
	KindPartition Kind = "partition"
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
	// Audit records every write (POST, PUT, PATCH, DELETE) with its arrival time, path and outcome (Writes).
	Audit bool
	// KeepBody says which audited writes keep their request body (at most maxBody bytes; nil: none).
	KeepBody func(*http.Request) bool
}

// maxBody bounds a kept request body.
const maxBody = 1 << 20

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
	// cut is closed when a partition ends (nil: not partitioned); underway cancels the forwarded requests.
	cut      chan struct{}
	underway map[uint64]context.CancelFunc
	nextID   uint64
	writes   []Write
}

// Write is one audited write (Options.Audit).
type Write struct {
	// At is when the request arrived.
	At     time.Time
	Method string
	// Path is the URL path, e.g. /apis/coordination.k8s.io/v1/namespaces/kcp-system/leases/name.
	Path string
	// Forwarded is whether the request went upstream (not answered with a fault, not dropped by a partition).
	Forwarded bool
	// Code is the status the client got (0: none, the connection was aborted).
	Code int
	// Body is the request body when Options.KeepBody asked for it.
	Body []byte
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
		perSecond: map[int64]int{}, faults: map[Kind]int{}, underway: map[uint64]context.CancelFunc{}}
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
	p.Partition(false)
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

// ServeHTTP counts the request, then answers it with a fault, drops it (partition) or forwards it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var entry *Write
	if p.opts.Audit && isWrite(r) {
		rec := &statusRecorder{ResponseWriter: w}
		entry = &Write{At: p.clock(), Method: r.Method, Path: r.URL.Path}
		if p.opts.KeepBody != nil && p.opts.KeepBody(r) {
			entry.Body, _ = io.ReadAll(io.LimitReader(r.Body, maxBody))
			r.Body = io.NopCloser(bytes.NewReader(entry.Body))
		}
		w = rec
		// Deferred: a dropped request ends in a panic that aborts the connection.
		defer func() {
			entry.Code = rec.code
			p.mu.Lock()
			p.writes = append(p.writes, *entry)
			p.mu.Unlock()
		}()
	}
	kind, watchLife, cut, id, ctx, cancel := p.decide(r)
	switch kind {
	case KindPartition:
		// No answer: the client waits until it gives up or the partition ends, then loses its connection.
		select {
		case <-r.Context().Done():
		case <-cut:
		}
		panic(http.ErrAbortHandler)
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
		defer p.done(id, cancel)
		if entry != nil {
			entry.Forwarded = true
		}
		client := r.Context()
		if watchLife > 0 {
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, watchLife)
			defer stop()
			// Deferred: the reverse proxy aborts the connection with a panic when the stream breaks.
			defer func() {
				if ctx.Err() == context.DeadlineExceeded && client.Err() == nil {
					p.count(KindWatchDrop)
				}
			}()
		}
		p.upstream.ServeHTTP(w, r.WithContext(ctx))
	}
}

// decide counts the request and picks its fault (empty: forward) and, for a forwarded watch while faults are on,
// how long it may live. A forwarded request is registered with a context that a partition cancels (id, ctx,
// cancel; the caller calls done); a dropped one gets the channel that closes when the partition ends.
func (p *Proxy) decide(r *http.Request) (kind Kind, watchLife time.Duration, cut chan struct{}, id uint64, ctx context.Context, cancel context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.perSecond[p.now().Unix()]++
	if p.cut != nil {
		p.faults[KindPartition]++
		return KindPartition, 0, p.cut, 0, nil, nil
	}
	if p.enabled && p.rnd.Float64() < p.opts.Share {
		kind := []Kind{KindTooManyRequests, KindInternalError, KindUnavailable, KindHold}[p.rnd.IntN(4)]
		p.faults[kind]++
		return kind, 0, nil, 0, nil, nil
	}
	p.forwarded++
	if p.enabled && isWatch(r) {
		p.watches++
		span := p.opts.WatchDropMax - p.opts.WatchDropMin
		watchLife = p.opts.WatchDropMin + time.Duration(p.rnd.Int64N(int64(span)+1))
	}
	ctx, cancel = context.WithCancel(r.Context())
	p.nextID++
	p.underway[p.nextID] = cancel
	return "", watchLife, nil, p.nextID, ctx, cancel
}

func (p *Proxy) clock() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now()
}

func (p *Proxy) done(id uint64, cancel context.CancelFunc) {
	cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.underway, id)
}

// Partition cuts the client off (on) or connects it again. While cut off, no request is forwarded or answered:
// each waits until the client gives up or the partition ends, then its connection is aborted, as with a network
// that drops every packet; the requests under way when the partition starts (watches too) are aborted at once.
func (p *Proxy) Partition(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.cut == nil:
		p.cut = make(chan struct{})
		for id, cancel := range p.underway {
			cancel()
			delete(p.underway, id)
			p.faults[KindPartition]++
		}
	case !on && p.cut != nil:
		close(p.cut)
		p.cut = nil
	}
}

// Partitioned reports whether the client is cut off.
func (p *Proxy) Partitioned() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut != nil
}

// Writes returns the audited writes so far, in the order they ended.
func (p *Proxy) Writes() []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Write(nil), p.writes...)
}

func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// statusRecorder remembers the status sent to the client.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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
