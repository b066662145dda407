package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Mode selects how shoots are backed by API servers.
type Mode string

const (
	// ModeNone gives every shoot CAs and a placeholder address but no server (cheapest; kubeconfigs are
	// issued but cannot be used).
	ModeNone Mode = ""
	// ModeShared backs all shoots with one API server; all shoots share the same CAs, so a kubeconfig of any
	// shoot works against it. Objects of different shoots live side by side in that one server.
	ModeShared Mode = "shared"
	// ModePerShoot starts an API server per shoot with its own CAs (isolated; ~1-3 s and ~150 MB per shoot).
	ModePerShoot Mode = "per-shoot"
)

// ParseMode maps a flag value to a Mode.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return ModeNone, nil
	case "shared":
		return ModeShared, nil
	case "per-shoot":
		return ModePerShoot, nil
	}
	return ModeNone, fmt.Errorf("unknown runtime API server mode %q (want none, shared or per-shoot)", s)
}

// ErrNoServer is returned when a client to a shoot's API server is requested but the shoot has none.
var ErrNoServer = errors.New("no runtime API server for this shoot")

// Endpoint is what a shoot needs to advertise its API server.
type Endpoint struct {
	// URL goes into status.advertisedAddresses (name "external").
	URL string
	// CAs go into the shoot's InternalSecret `<shoot>.ca-client` and ConfigMap `<shoot>.ca-cluster`.
	CAs CAs
}

// PoolOptions configure a Pool.
type PoolOptions struct {
	Mode                  Mode
	BinaryAssetsDirectory string
	// Out receives the servers' output (discarded when nil).
	Out io.Writer
	// StartTimeout bounds the start of each server and of their etcd (0: envtest's 20 s; see ServerOptions).
	StartTimeout time.Duration
}

// Pool hands out endpoints for shoots and owns the API servers behind them. It is safe for concurrent use.
type Pool struct {
	opts PoolOptions
	// startSem (capacity 1) serialises server starts and guards etcd. A channel, not a mutex, so a caller whose
	// context ends stops waiting: the simulated gardenlet's workers must return when the garden stops (a queue of
	// starts, seconds each, outlasted its manager's 30 s grace period at the end of an e2e package).
	startSem chan struct{}
	caMu     sync.Mutex // guards sharedC
	mu       sync.Mutex // guards shared, servers, stopped
	etcd     *envtest.Etcd
	shared   *Server
	sharedC  *CAs
	servers  map[string]*Server
	stopped  bool
	// starts counts the server starts running or waiting for startSem (Starts).
	starts atomic.Int32
}

// Starts is the number of server starts in progress or queued: a shoot whose operation waits for its server says
// so with it (the simulated gardenlet's progress description), so a stall on a busy machine names its cause.
func (p *Pool) Starts() int { return int(p.starts.Load()) }

// Running reports whether the shoot identified by key has its endpoint without a start: a running server, or no
// server needed (serve false, or no server mode).
func (p *Pool) Running(key string, serve bool) bool {
	if !serve || p.opts.Mode == ModeNone {
		return true
	}
	srv, err := p.lookup(p.opts.Mode, key)
	return srv != nil || err != nil
}

// NewPool creates a pool; servers start lazily on first use.
func NewPool(opts PoolOptions) *Pool {
	return &Pool{opts: opts, servers: map[string]*Server{}, startSem: make(chan struct{}, 1)}
}

// Mode returns the pool's mode.
func (p *Pool) Mode() Mode { return p.opts.Mode }

// Ensure returns the endpoint of the shoot identified by key (namespace/name), starting a server if the
// mode requires one and serve is true (serve=false gives a placeholder endpoint in every mode). Idempotent.
// Server starts are serialised (they are CPU-heavy); placeholder endpoints and running servers never wait for them.
func (p *Pool) Ensure(ctx context.Context, key string, serve bool) (Endpoint, error) {
	mode := p.opts.Mode
	if !serve {
		mode = ModeNone
	}
	if mode == ModeNone {
		cas, err := p.sharedCAs()
		if err != nil {
			return Endpoint{}, err
		}
		ns, name, _ := strings.Cut(key, "/")
		return Endpoint{URL: fmt.Sprintf("https://api.%s.%s.sandbox.invalid", name, strings.TrimPrefix(ns, "garden-")), CAs: cas}, nil
	}
	// A running server is handed out without waiting for the starts of other shoots' servers: each takes seconds on
	// a busy machine, and a shoot that already has one must not queue behind them (its operations would stall).
	if srv, err := p.lookup(mode, key); srv != nil || err != nil {
		if err != nil {
			return Endpoint{}, err
		}
		return Endpoint{URL: srv.URL(), CAs: srv.CAs()}, nil
	}
	p.starts.Add(1)
	defer p.starts.Add(-1)
	select {
	case p.startSem <- struct{}{}:
	case <-ctx.Done():
		return Endpoint{}, fmt.Errorf("runtime API server of shoot %s: waiting for other starts: %w", key, context.Cause(ctx))
	}
	// The start cannot be interrupted (envtest has no context), so it runs on after a caller gives up and registers
	// its server for the next Ensure; Stop waits for it through startSem.
	result := make(chan startResult, 1)
	go func() {
		defer func() { <-p.startSem }()
		ep, err := p.start(mode, key)
		result <- startResult{ep, err}
	}()
	select {
	case r := <-result:
		return r.ep, r.err
	case <-ctx.Done():
		return Endpoint{}, fmt.Errorf("runtime API server of shoot %s: still starting: %w", key, context.Cause(ctx))
	}
}

type startResult struct {
	ep  Endpoint
	err error
}

// start starts the server of key unless one runs already; the caller holds startSem.
func (p *Pool) start(mode Mode, key string) (Endpoint, error) {
	if srv, err := p.lookup(mode, key); srv != nil || err != nil {
		if err != nil {
			return Endpoint{}, err
		}
		return Endpoint{URL: srv.URL(), CAs: srv.CAs()}, nil
	}
	var cas CAs
	var err error
	if mode == ModeShared {
		cas, err = p.sharedCAs()
	} else {
		cas, err = NewCAs(strings.ReplaceAll(key, "/", "-"))
	}
	if err != nil {
		return Endpoint{}, err
	}
	prefix := "/runtimes/shared"
	if mode == ModePerShoot {
		prefix = "/runtimes/" + key
	}
	srv, err := p.startServer(cas, prefix)
	if err != nil {
		return Endpoint{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return Endpoint{}, errors.Join(errors.New("runtime API server pool is stopped"), srv.Stop())
	}
	if mode == ModeShared {
		p.shared = srv
	} else {
		p.servers[key] = srv
	}
	return Endpoint{URL: srv.URL(), CAs: cas}, nil
}

// lookup returns the running server for key, if any.
func (p *Pool) lookup(mode Mode, key string) (*Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, errors.New("runtime API server pool is stopped")
	}
	if mode == ModeShared {
		return p.shared, nil
	}
	return p.servers[key], nil
}

func (p *Pool) sharedCAs() (CAs, error) {
	p.caMu.Lock()
	defer p.caMu.Unlock()
	if p.sharedC == nil {
		cas, err := NewCAs("sandbox-shoots")
		if err != nil {
			return CAs{}, err
		}
		p.sharedC = &cas
	}
	return *p.sharedC, nil
}

func (p *Pool) startServer(cas CAs, prefix string) (*Server, error) {
	if p.etcd == nil {
		etcd := &envtest.Etcd{Out: p.opts.Out, Err: p.opts.Out, StartTimeout: p.opts.StartTimeout, StopTimeout: p.opts.StartTimeout}
		if p.opts.BinaryAssetsDirectory != "" {
			etcd.Path = p.opts.BinaryAssetsDirectory + "/etcd"
		}
		if err := etcd.Start(); err != nil {
			_ = etcd.Stop()
			return nil, fmt.Errorf("start runtime etcd: %w", err)
		}
		p.etcd = etcd
	}
	return StartServer(ServerOptions{
		BinaryAssetsDirectory: p.opts.BinaryAssetsDirectory, EtcdURL: p.etcd.URL, EtcdPrefix: prefix, CAs: cas,
		Out: p.opts.Out, Err: p.opts.Out, StartTimeout: p.opts.StartTimeout,
	})
}

// Release stops the per-shoot server of key (no-op in other modes or when none runs).
func (p *Pool) Release(key string) error {
	p.mu.Lock()
	srv, ok := p.servers[key]
	delete(p.servers, key)
	p.mu.Unlock()
	if !ok {
		return nil
	}
	return srv.Stop()
}

// ServeOpenIDConnect installs the OpenIDConnect CRD into the API server behind the shoot key (see
// Server.ServeOpenIDConnect); ErrNoServer when the shoot has none.
func (p *Pool) ServeOpenIDConnect(ctx context.Context, key string) error {
	srv, err := p.server(key)
	if err != nil {
		return err
	}
	return srv.ServeOpenIDConnect(ctx)
}

// server returns the running server behind the shoot key, or ErrNoServer.
func (p *Pool) server(key string) (*Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	srv := p.servers[key]
	if p.opts.Mode == ModeShared {
		srv = p.shared
	}
	if srv == nil {
		return nil, fmt.Errorf("shoot %s: %w", key, ErrNoServer)
	}
	return srv, nil
}

// AdminConfig returns a system:masters rest.Config for the API server behind the shoot key
// (namespace/name). It returns ErrNoServer when the shoot has no server (yet).
func (p *Pool) AdminConfig(key string) (*rest.Config, error) {
	srv, err := p.server(key)
	if err != nil {
		return nil, err
	}
	return srv.AdminConfig()
}

// AuditLogPath returns the audit log of the API server behind the shoot key (see Server.AuditLogPath), or
// ErrNoServer.
func (p *Pool) AuditLogPath(key string) (string, error) {
	srv, err := p.server(key)
	if err != nil {
		return "", err
	}
	return srv.AuditLogPath(), nil
}

// Stop stops every server and the shared etcd. The pool cannot be used afterwards.
func (p *Pool) Stop() error {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.startSem <- struct{}{} // wait for a start in flight; it sees stopped and stops its server
	defer func() { <-p.startSem }()
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for key, srv := range p.servers {
		errs = append(errs, srv.Stop())
		delete(p.servers, key)
	}
	if p.shared != nil {
		errs = append(errs, p.shared.Stop())
		p.shared = nil
	}
	if p.etcd != nil {
		if err := p.etcd.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop runtime etcd: %w", err))
		}
		p.etcd = nil
	}
	return errors.Join(errs...)
}
