package registrycachesync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// WatcherPath is where the Runtime Watcher posts an event about a watched object of a runtime: its listener
// contract v2 (/v2/<component>/event) under the component name the previous manager registered.
const WatcherPath = "/v2/infrastructure-manager-registry-cache/event"

// Bounds of one request to the listener. The body bound is the Runtime Watcher listener's own (16 KiB); its events
// are well under 1 KiB. The client certificate travels in X-Forwarded-Client-Cert, which the watcher's listener
// bounds to 32 KiB; the header total allows that and the usual others.
const (
	MaxEventBytes  = 16 << 10
	maxXFCCBytes   = 32 << 10
	maxHeaderBytes = 64 << 10
)

// XFCCHeader carries the client certificate the ingress (Istio) verified, URL-encoded PEM after "Cert=".
const XFCCHeader = "X-Forwarded-Client-Cert"

// Outcomes of a watcher event (metric label values).
const (
	EventQueued           = "queued"
	EventCoalesced        = "coalesced"
	EventUnknownRuntime   = "unknown_runtime"
	EventUnauthenticated  = "unauthenticated"
	EventTooLarge         = "too_large"
	EventBadRequest       = "bad_request"
	EventMethodNotAllowed = "method_not_allowed"
	EventRateLimited      = "rate_limited"
	EventSourceLimited    = "source_limited"
	EventUnavailable      = "unavailable"
)

// WatcherEvent is the body the Runtime Watcher sends: the object that changed and its kind. The watcher encodes
// watched as a Go NamespacedName (keys "Namespace" and "Name"); JSON keys match case-insensitively.
type WatcherEvent struct {
	Watched struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"watched"`
	WatchedGvk struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"watchedGvk"`
}

// Enqueuer asks for a sync of one Runtime soon. Implementations do not block beyond ctx.
type Enqueuer func(ctx context.Context, namespace, runtimeID string) error

// Listener serves the Runtime Watcher's events about registry cache changes in runtimes, so that a customer's change
// is synced in seconds rather than at the next periodic sync. It answers like the Runtime Watcher's own listener
// (200 once the event is taken, 401 without a client certificate, 413 over 16 KiB, 405 for other methods), with
// these differences: a certificate without a common name, or one that is no runtime ID, is 401 too; a body that is
// no event is 400; floods are 429.
//
// The runtime ID is the common name of the certificate in the X-Forwarded-Client-Cert element the trusted hop wrote
// (Trust); the port must be reachable only through the ingress gateway (the NetworkPolicy and AuthorizationPolicy
// shipped with the operator). Whatever a caller sends costs it first its own budget (SourceLimiter, per client
// certificate); an unknown runtime ID then costs nothing shared (answered 200 like a known one, so which IDs exist
// is not told); a known runtime gets at most one sync per Coalesce (plus one at the window's end) before the
// global budget (Limiter) is spent.
type Listener struct {
	// Addr is the listen address (":8082").
	Addr string
	// Trust says which X-Forwarded-Client-Cert element carries the caller's certificate.
	Trust Trust
	// Runtimes reads Runtimes (the manager's cache) in Namespaces.
	Runtimes   client.Reader
	Namespaces []string
	// Enqueue asks for the sync of a known runtime.
	Enqueue Enqueuer
	// SourceLimiter bounds the events of one client certificate, before anything shared is spent (nil: no bound).
	SourceLimiter *KeyedLimiter
	// Limiter bounds the syncs queued per second, all runtimes together (nil: no bound). It is spent only for a
	// known runtime whose coalescing window is closed.
	Limiter *rate.Limiter
	// Coalesce is the window in which further events of a runtime already queued are folded into one sync queued
	// at the window's end (0: every event queues).
	Coalesce time.Duration
	Metrics  *Metrics

	mu      sync.Mutex
	windows map[string]*window
}

// window is a runtime's coalescing window: it ends at end; trailing is set when an event came in it.
type window struct {
	end      time.Time
	trailing bool
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader listens, as the previous manager's
// listener did. The controller that syncs runs there, so an event is queued in memory and a standby never writes
// anything for one; a standby's port is closed, and Istio's default retry (connect failures and 503, on another
// host) takes the event to the leader.
func (l *Listener) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it serves until ctx ends.
func (l *Listener) Start(ctx context.Context) error {
	lis, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("registry cache watcher listener on %s: %w", l.Addr, err)
	}
	return l.Serve(ctx, lis)
}

// Serve serves on lis until ctx ends.
func (l *Listener) Serve(ctx context.Context, lis net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle(WatcherPath, l)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: maxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	logf.FromContext(ctx).Info("registry cache watcher listener started", "address", lis.Addr().String(), "path", WatcherPath)
	select {
	case err := <-done:
		return fmt.Errorf("registry cache watcher listener: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stop the registry cache watcher listener: %w", err)
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	outcome, code, msg := l.handle(r)
	l.Metrics.ObserveWatcherEvent(outcome)
	if code != http.StatusOK {
		http.Error(w, msg, code)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handle decides the answer. The checks go from the cheapest, and from what the caller pays alone to what all share:
// the certificate, the caller's own budget, the body (never more than MaxEventBytes), the runtime in the cache, the
// runtime's window, and only then the global budget.
func (l *Listener) handle(r *http.Request) (outcome string, code int, msg string) {
	if r.Method != http.MethodPost {
		return EventMethodNotAllowed, http.StatusMethodNotAllowed, "use POST"
	}
	if r.ContentLength > MaxEventBytes {
		return EventTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", MaxEventBytes)
	}
	runtimeID, source, err := l.identify(r.Header)
	if err != nil {
		return EventUnauthenticated, http.StatusUnauthorized, err.Error()
	}
	if l.SourceLimiter != nil && !l.SourceLimiter.Allow(source) {
		return EventSourceLimited, http.StatusTooManyRequests, "too many events from this client; the runtime is synced periodically anyway"
	}
	ev, outcome, code, msg := readEvent(r)
	if code != http.StatusOK {
		return outcome, code, msg
	}
	ns, found, err := l.find(r.Context(), runtimeID)
	switch {
	case err != nil:
		return EventUnavailable, http.StatusServiceUnavailable, "cannot read runtimes"
	case !found:
		// Answered like a known runtime: a caller learns nothing about which runtime IDs exist.
		return EventUnknownRuntime, http.StatusOK, ""
	}
	switch l.admit(ns + "/" + runtimeID) {
	case admitCoalesced:
		return EventCoalesced, http.StatusOK, ""
	case admitLimited:
		return EventRateLimited, http.StatusTooManyRequests, "too many events; the runtime is synced periodically anyway"
	}
	if err := l.Enqueue(r.Context(), ns, runtimeID); err != nil {
		logf.FromContext(r.Context()).Error(err, "registry cache watcher event not queued", "runtimeID", runtimeID)
		return EventUnavailable, http.StatusServiceUnavailable, "cannot queue the sync"
	}
	logf.FromContext(r.Context()).V(1).Info("registry cache watcher event", "runtimeID", runtimeID,
		"kind", ev.WatchedGvk.Kind, "namespace", ev.Watched.Namespace, "name", ev.Watched.Name)
	return EventQueued, http.StatusOK, ""
}

// identify is the runtime ID (the common name of the trusted client certificate) and the key of its source.
func (l *Listener) identify(h http.Header) (runtimeID, source string, err error) {
	cert, source, err := l.Trust.clientCertificate(h)
	if err != nil {
		return "", "", err
	}
	if !runtimeIDPattern.MatchString(cert.Subject.CommonName) {
		return "", "", errors.New("the client certificate's common name is not a runtime ID")
	}
	return cert.Subject.CommonName, source, nil
}

// readEvent reads and decodes the body; code is 200 when it is an event.
func readEvent(r *http.Request) (ev WatcherEvent, outcome string, code int, msg string) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxEventBytes))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return ev, EventTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", MaxEventBytes)
	}
	if err != nil {
		return ev, EventBadRequest, http.StatusBadRequest, "cannot read the body"
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return ev, EventBadRequest, http.StatusBadRequest, "the body is not a watcher event"
	}
	return ev, "", http.StatusOK, ""
}

// find looks the runtime up in the watched namespaces.
func (l *Listener) find(ctx context.Context, runtimeID string) (string, bool, error) {
	for _, ns := range l.Namespaces {
		err := l.Runtimes.Get(ctx, client.ObjectKey{Namespace: ns, Name: runtimeID}, &imv1.Runtime{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", false, fmt.Errorf("get runtime %s/%s: %w", ns, runtimeID, err)
		}
		return ns, true, nil
	}
	return "", false, nil
}

// Answers of admit.
const (
	admitQueue = iota
	admitCoalesced
	admitLimited
)

// admit tells whether an event of key queues a sync now. Within a runtime's window further events queue nothing
// at once; the first of them makes one sync queued at the window's end, so a change right after a sync started is
// never lost. Only an event that would open a window spends the global budget; refused, it opens none. Windows are
// kept only for known runtimes and dropped once over.
func (l *Listener) admit(key string) int {
	if l.Coalesce <= 0 {
		if l.Limiter != nil && !l.Limiter.Allow() {
			return admitLimited
		}
		return admitQueue
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.windows == nil {
		l.windows = map[string]*window{}
	}
	if w, ok := l.windows[key]; ok && now.Before(w.end) {
		if !w.trailing {
			w.trailing = true
			ns, id, _ := strings.Cut(key, "/")
			time.AfterFunc(w.end.Sub(now), func() { l.trail(key, ns, id) })
		}
		return admitCoalesced
	}
	if l.Limiter != nil && !l.Limiter.Allow() {
		return admitLimited
	}
	l.windows[key] = &window{end: now.Add(l.Coalesce)}
	return admitQueue
}

// trail queues the sync of a window's folded events and opens the next window.
func (l *Listener) trail(key, ns, id string) {
	l.mu.Lock()
	l.windows[key] = &window{end: time.Now().Add(l.Coalesce)}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.Enqueue(ctx, ns, id) // a lost trailing sync is caught by the periodic one
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, w := range l.windows {
		if time.Now().After(w.end) && !w.trailing {
			delete(l.windows, k)
		}
	}
}

// Bounds of the watcher listener as the operator runs it. A sync reads one runtime (a few requests), so 20 syncs
// a second in all is far above what customers' changes cause, and far below what would crowd out periodic syncs;
// a runtime's events within 5 s are one sync (plus one at the window's end). One client certificate may send 5
// events a second (burst 20) before anything shared is spent; 10,000 certificates are remembered (about 2 MiB).
const (
	WatcherEventsPerSecond = 20
	WatcherEventsBurst     = 50
	WatcherCoalesce        = 5 * time.Second
	WatcherSourceRate      = 5
	WatcherSourceBurst     = 20
	WatcherSourceKeys      = 10000
)

// ChannelEnqueuer sends the request to the controller's trigger channel (the leader's controller reads it). A full
// channel is an error after ctx or a second, whichever comes first: the watcher is answered, not held.
func ChannelEnqueuer(ch chan<- event.TypedGenericEvent[reconcile.Request]) Enqueuer {
	return func(ctx context.Context, namespace, runtimeID string) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		select {
		case ch <- event.TypedGenericEvent[reconcile.Request]{Object: requestFor(namespace, runtimeID)}:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("queue the sync of runtime %s: %w", runtimeID, ctx.Err())
		}
	}
}
