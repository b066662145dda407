package registrycachesync

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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
// The runtime ID is the common name of the certificate in X-Forwarded-Client-Cert, which only the ingress in front
// of the operator may set (it verified the certificate): the listener trusts the header, so it must be reachable only
// through that ingress. Whatever a caller sends, the worst it gets is a sync of a Runtime that exists, at most one
// per runtime per Coalesce and Rate events per second in all: an unknown runtime ID is answered 200 like a known one
// (which IDs exist is not told) and does nothing.
type Listener struct {
	// Addr is the listen address (":8082").
	Addr string
	// Runtimes reads Runtimes (the manager's cache) in Namespaces.
	Runtimes   client.Reader
	Namespaces []string
	// Enqueue asks for the sync of a known runtime.
	Enqueue Enqueuer
	// Limiter bounds the events handled per second, all callers together (nil: no bound).
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

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica listens (the Service sends events to
// any of them); Enqueue decides how an event reaches the leader's controller.
func (l *Listener) NeedLeaderElection() bool { return false }

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

// handle decides the answer. The checks go from the cheapest: the body is read only for a caller with a
// certificate, within the rate, and never more than MaxEventBytes of it.
func (l *Listener) handle(r *http.Request) (outcome string, code int, msg string) {
	if r.Method != http.MethodPost {
		return EventMethodNotAllowed, http.StatusMethodNotAllowed, "use POST"
	}
	if r.ContentLength > MaxEventBytes {
		return EventTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", MaxEventBytes)
	}
	runtimeID, err := runtimeIDOf(r.Header)
	if err != nil {
		return EventUnauthenticated, http.StatusUnauthorized, err.Error()
	}
	if l.Limiter != nil && !l.Limiter.Allow() {
		return EventRateLimited, http.StatusTooManyRequests, "too many events; the runtime is synced periodically anyway"
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxEventBytes))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return EventTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", MaxEventBytes)
	}
	if err != nil {
		return EventBadRequest, http.StatusBadRequest, "cannot read the body"
	}
	var ev WatcherEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return EventBadRequest, http.StatusBadRequest, "the body is not a watcher event"
	}
	ns, found, err := l.find(r.Context(), runtimeID)
	switch {
	case err != nil:
		return EventUnavailable, http.StatusServiceUnavailable, "cannot read runtimes"
	case !found:
		// Answered like a known runtime: a caller learns nothing about which runtime IDs exist.
		return EventUnknownRuntime, http.StatusOK, ""
	}
	if !l.admit(ns + "/" + runtimeID) {
		return EventCoalesced, http.StatusOK, ""
	}
	if err := l.Enqueue(r.Context(), ns, runtimeID); err != nil {
		logf.FromContext(r.Context()).Error(err, "registry cache watcher event not queued", "runtimeID", runtimeID)
		return EventUnavailable, http.StatusServiceUnavailable, "cannot queue the sync"
	}
	logf.FromContext(r.Context()).V(1).Info("registry cache watcher event", "runtimeID", runtimeID,
		"kind", ev.WatchedGvk.Kind, "namespace", ev.Watched.Namespace, "name", ev.Watched.Name)
	return EventQueued, http.StatusOK, ""
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

// admit tells whether an event of key queues a sync now. Within a runtime's window further events queue nothing
// at once; the first of them makes one sync queued at the window's end, so a change right after a sync started is
// never lost. Windows are kept only for known runtimes and dropped once over.
func (l *Listener) admit(key string) bool {
	if l.Coalesce <= 0 {
		return true
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
		return false
	}
	l.windows[key] = &window{end: now.Add(l.Coalesce)}
	return true
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

// runtimeIDOf is the common name of the client certificate in X-Forwarded-Client-Cert (the first Cert= of the
// first element), which must be a runtime ID.
func runtimeIDOf(h http.Header) (string, error) {
	values := h.Values(XFCCHeader)
	if len(values) == 0 {
		return "", errors.New("no client certificate: the " + XFCCHeader + " header is missing")
	}
	v := values[0]
	if len(v) > maxXFCCBytes {
		return "", fmt.Errorf("the %s header exceeds %d bytes", XFCCHeader, maxXFCCBytes)
	}
	raw := ""
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		if after, ok := strings.CutPrefix(strings.TrimSpace(part), "Cert="); ok {
			raw = after
			break
		}
	}
	if raw == "" {
		return "", errors.New("no client certificate in the " + XFCCHeader + " header")
	}
	decoded, err := url.QueryUnescape(strings.Trim(raw, `"`))
	if err != nil {
		return "", errors.New("the client certificate is not URL-encoded")
	}
	block, _ := pem.Decode([]byte(strings.Trim(decoded, `"`)))
	if block == nil {
		return "", errors.New("the client certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", errors.New("the client certificate does not parse")
	}
	cn := cert.Subject.CommonName
	if !runtimeIDPattern.MatchString(cn) {
		return "", errors.New("the client certificate's common name is not a runtime ID")
	}
	return cn, nil
}

// Bounds of the watcher listener as the operator runs it. A sync reads one runtime (a few requests), so 20 events
// a second in all is far above what customers' changes cause, and far below what would crowd out periodic syncs;
// a runtime's events within 5 s are one sync (plus one at the window's end).
const (
	WatcherEventsPerSecond = 20
	WatcherEventsBurst     = 50
	WatcherCoalesce        = 5 * time.Second
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

// AnnotationEnqueuer sets the Runtime's trigger annotation to the time now (one merge patch of metadata only): the
// leader's controller watches it and syncs. It is how a replica that is not the leader hands an event over.
func AnnotationEnqueuer(c client.Writer) Enqueuer {
	return func(ctx context.Context, namespace, runtimeID string) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, imv1.AnnotationSyncRegistryCache, time.Now().UTC().Format(time.RFC3339Nano))
		rt := &imv1.Runtime{}
		rt.Namespace, rt.Name = namespace, runtimeID
		if err := c.Patch(ctx, rt, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("annotate runtime %s for a registry cache sync: %w", runtimeID, err)
		}
		return nil
	}
}

// LeaderOrAnnotation enqueues through leader once elected is closed (this replica runs the controller), through
// standby before: events reach the leader whichever replica the Service sent them to.
func LeaderOrAnnotation(elected <-chan struct{}, leader, standby Enqueuer) Enqueuer {
	return func(ctx context.Context, namespace, runtimeID string) error {
		select {
		case <-elected:
			return leader(ctx, namespace, runtimeID)
		default:
			return standby(ctx, namespace, runtimeID)
		}
	}
}
