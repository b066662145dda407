package kube

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Bounds of the runtime clients.
const (
	// RuntimeRequestTimeout bounds every request to a runtime's API server: one slow runtime must not hold a worker.
	// A port call (a few requests) is bounded by its adapter besides (the configurator by runtime.timeout).
	RuntimeRequestTimeout = 15 * time.Second
	// DefaultMaxRuntimeClients bounds the clients kept (least recently used go first): a client holds a connection
	// pool, and a runtime is reached only when something changed or a period passed. A client with its TLS
	// transport and connection is about 50 KB (heap profile of a provisioning wave at 5,000 Runtimes), so the bound
	// is the memory a wave can take: 250 is ten times what all workers together use at once (25 Runtime workers and
	// the registry cache, audit log and ServiceAccount kubeconfig workers); an evicted client costs a new TLS
	// handshake when its runtime is next reached.
	DefaultMaxRuntimeClients = 250
	// DefaultRuntimeClientIdle is how long an unused client is kept. Its connections close after 90 s idle anyway
	// (client-go's transport), so a client kept longer saves only parsing a kubeconfig, and at fleet size the kept
	// clients were a third of the operator's heap (docs/operations/scale.md).
	DefaultRuntimeClientIdle = 2 * time.Minute
	// runtimeUserAgent is the user agent of every request to a runtime.
	runtimeUserAgent = "kim-runtime"
)

// KubeconfigSource returns the current kubeconfig of a runtime.
type KubeconfigSource interface {
	// Kubeconfig returns the kubeconfig; errors wrap ports.ErrRuntimeUnreachable when there is none (yet).
	Kubeconfig(ctx context.Context, runtimeID string) ([]byte, error)
}

// VersionedKubeconfigSource is a KubeconfigSource that tells which version of a runtime's kubeconfig it read, and
// which version is current without a request (from a cache): a client built from that very version is used again
// without reading the kubeconfig.
type VersionedKubeconfigSource interface {
	KubeconfigSource
	// CachedVersion is the version of the runtime's kubeconfig a cache shows; ok is false when the cache cannot
	// tell (no such Secret in it, or one without a kubeconfig). Sends no request.
	CachedVersion(ctx context.Context, runtimeID string) (version string, ok bool)
	// VersionedKubeconfig is Kubeconfig and the version it read.
	VersionedKubeconfig(ctx context.Context, runtimeID string) (kc []byte, version string, err error)
}

// SecretKubeconfigs reads kubeconfig-<runtimeID> (key config) in Namespace of KCP, through Reader: a live reader in
// the operator (its cache keeps Secrets without their data, see SecretCacheTransform). Cache, when set, is that
// cache: it tells the version of a Secret (its UID and resourceVersion) without a request.
type SecretKubeconfigs struct {
	Reader    client.Reader
	Cache     client.Reader
	Namespace string
}

var _ VersionedKubeconfigSource = SecretKubeconfigs{}

// Kubeconfig implements KubeconfigSource.
func (s SecretKubeconfigs) Kubeconfig(ctx context.Context, runtimeID string) ([]byte, error) {
	kc, _, err := s.VersionedKubeconfig(ctx, runtimeID)
	return kc, err
}

// VersionedKubeconfig implements VersionedKubeconfigSource: the Secret read through Reader.
func (s SecretKubeconfigs) VersionedKubeconfig(ctx context.Context, runtimeID string) ([]byte, string, error) {
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: kubeconfig.SecretName(runtimeID)}, secret); err != nil {
		return nil, "", fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	kc := secret.Data[kubeconfig.SecretKey]
	if len(kc) == 0 {
		return nil, "", fmt.Errorf("kubeconfig of runtime %s is empty: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	return kc, secretVersion(secret), nil
}

// CachedVersion implements VersionedKubeconfigSource: the Secret's version in Cache, when the cached copy records
// a kubeconfig (SecretCacheTransform).
func (s SecretKubeconfigs) CachedVersion(ctx context.Context, runtimeID string) (string, bool) {
	if s.Cache == nil {
		return "", false
	}
	secret := &corev1.Secret{}
	if err := s.Cache.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: kubeconfig.SecretName(runtimeID)}, secret); err != nil {
		return "", false
	}
	if !hasData(secret, kubeconfig.SecretKey, true) {
		return "", false
	}
	return secretVersion(secret), true
}

// secretVersion identifies one version of a Secret: a Secret written again, or deleted and created anew, has
// another.
func secretVersion(s *corev1.Secret) string { return string(s.UID) + "/" + s.ResourceVersion }

// RuntimeClientFactory returns a client of a runtime's API server. The self-service adapters (registry cache,
// audit log credentials) take one; in the operator it is RuntimeClients.Controller, tests hand in others.
type RuntimeClientFactory func(ctx context.Context, runtimeID string) (client.Client, error)

// RuntimeClientsOptions configure RuntimeClients; zero values are the defaults.
type RuntimeClientsOptions struct {
	// Kubeconfigs returns a runtime's kubeconfig (in the operator the KCP Secret, read live).
	Kubeconfigs KubeconfigSource
	// RequestTimeout bounds every request (0: RuntimeRequestTimeout).
	RequestTimeout time.Duration
	// MaxClients bounds the clients kept (0: DefaultMaxRuntimeClients).
	MaxClients int
	// Idle is how long an unused client is kept (0: DefaultRuntimeClientIdle).
	Idle time.Duration
	// Now is the clock of the idle bound (nil: the wall clock).
	Now func() time.Time
}

// RuntimeClients is the one way the operator reaches runtimes' API servers, handed to every adapter that does
// (the runtime configurator, the ServiceAccount identities, the registry cache source, the audit log Secret writer).
// It keeps one client per runtime, keyed by runtime ID and the hash of the kubeconfig it was built from (a rotated
// kubeconfig gets a new client), at most MaxClients of them (least recently used go first) and none unused for
// longer than Idle; every request is bounded by RequestTimeout, and answerOf is the one classification of what a
// failed request means. Safe for concurrent use.
type RuntimeClients struct {
	kubeconfigs KubeconfigSource
	cache       *clientCache
}

// NewRuntimeClients returns the runtime clients of o.
func NewRuntimeClients(o RuntimeClientsOptions) *RuntimeClients {
	timeout := o.RequestTimeout
	if timeout <= 0 {
		timeout = RuntimeRequestTimeout
	}
	maxClients := o.MaxClients
	if maxClients <= 0 {
		maxClients = DefaultMaxRuntimeClients
	}
	idle := o.Idle
	if idle <= 0 {
		idle = DefaultRuntimeClientIdle
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &RuntimeClients{kubeconfigs: o.Kubeconfigs, cache: newClientCache(maxClients, idle, now,
		func(id string, kc []byte) (*runtimeClient, error) { return newRuntimeClient(id, kc, timeout) })}
}

// get returns the client of runtimeID for its current kubeconfig, read from the kubeconfig source at every call so
// that a rotation is seen at once; with a VersionedKubeconfigSource, a client built from the version its cache
// shows is used without reading the kubeconfig again. Such a client's kubeconfig is the Secret the cache holds, or
// one version behind while the cache has not seen a write yet (moments): a kubeconfig of the same runtime that was
// valid when it was written (a rotated one stays valid until it expires), never another runtime's. Reading every
// kubeconfig live cost the KCP a request per configuration and registry cache sync (issue 29). Errors wrap
// ports.ErrRuntimeUnreachable.
func (r *RuntimeClients) get(ctx context.Context, runtimeID string) (*runtimeClient, error) {
	if r.kubeconfigs == nil {
		return nil, fmt.Errorf("runtime %s: no kubeconfig source: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	vs, versioned := r.kubeconfigs.(VersionedKubeconfigSource)
	if !versioned {
		kc, err := r.kubeconfigs.Kubeconfig(ctx, runtimeID)
		if err != nil {
			return nil, err
		}
		return r.cache.get(runtimeID, kc, "")
	}
	if v, ok := vs.CachedVersion(ctx, runtimeID); ok {
		if c := r.cache.current(runtimeID, v); c != nil {
			return c, nil
		}
	}
	kc, v, err := vs.VersionedKubeconfig(ctx, runtimeID)
	if err != nil {
		return nil, err
	}
	return r.cache.get(runtimeID, kc, v)
}

// forKubeconfig returns the client of runtimeID for a kubeconfig the caller read itself (an adapter whose port
// classifies a missing kubeconfig its own way). Errors wrap ports.ErrRuntimeUnreachable.
func (r *RuntimeClients) forKubeconfig(runtimeID string, kc []byte) (*runtimeClient, error) {
	return r.cache.get(runtimeID, kc, "")
}

// Controller returns a controller-runtime client of runtimeID (a RuntimeClientFactory). It uses client-go's scheme,
// maps the kinds the self-service adapters use without discovery (knownKindsFirst), and counts response bodies on
// the wire against the budget a request's context carries (withResponseBudget), or MaxRuntimeResponseBytes each.
// Errors wrap
// ports.ErrRuntimeUnreachable.
func (r *RuntimeClients) Controller(ctx context.Context, runtimeID string) (client.Client, error) {
	c, err := r.get(ctx, runtimeID)
	if err != nil {
		return nil, err
	}
	return c.controller()
}

// Forget drops the client of runtimeID (the Runtime is gone); a later call builds a new one.
func (r *RuntimeClients) Forget(runtimeID string) { r.cache.forget(runtimeID) }

// Len is the number of clients kept (for tests and metrics).
func (r *RuntimeClients) Len() int { return r.cache.len() }

// restConfigOf parses a runtime's kubeconfig. Errors wrap ports.ErrRuntimeUnreachable.
func restConfigOf(runtimeID string, kc []byte) (*rest.Config, error) {
	cfg, err := RESTConfigFromRuntimeKubeconfig(kc)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	return cfg, nil
}

// runtimeClient is what the operator talks to one runtime with: typed, dynamic and controller-runtime clients over
// one HTTP client (one connection pool), built from one version of the runtime's kubeconfig.
type runtimeClient struct {
	runtimeID string
	// kubeconfigHash identifies the kubeconfig the client was built from: a rotated kubeconfig gets a new client.
	kubeconfigHash [32]byte
	http           *http.Client
	cfg            *rest.Config
	core           typedClients
	dynamic        dynamic.Interface

	mapperOnce sync.Once
	mapper     *restmapper.DeferredDiscoveryRESTMapper
	mapperErr  error

	ctrlOnce sync.Once
	ctrl     client.Client
	ctrlErr  error
}

// typedClients are the API groups the operator writes typed. Not a kubernetes.Clientset: that builds a REST client
// for each of its ~50 groups, which at one client per runtime was a fifth of the operator's heap at fleet size
// (docs/operations/scale.md).
type typedClients struct {
	core corev1client.CoreV1Interface
	rbac rbacv1client.RbacV1Interface
	apps appsv1client.AppsV1Interface
}

func (t typedClients) CoreV1() corev1client.CoreV1Interface { return t.core }
func (t typedClients) RbacV1() rbacv1client.RbacV1Interface { return t.rbac }
func (t typedClients) AppsV1() appsv1client.AppsV1Interface { return t.apps }

// restMapper maps kinds to resources for bootstrap manifests (built on first use: discovery costs requests and
// memory, and only landscapes with bootstrap manifests need it).
func (c *runtimeClient) restMapper() (meta.ResettableRESTMapper, error) {
	c.mapperOnce.Do(func() {
		d, err := discovery.NewDiscoveryClientForConfigAndClient(c.cfg, c.http)
		if err != nil {
			c.mapperErr = fmt.Errorf("discovery client for runtime %s: %w: %w", c.runtimeID, ports.ErrRuntimeUnreachable, err)
			return
		}
		c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d))
	})
	return c.mapper, c.mapperErr
}

// controller is the controller-runtime client (built on first use: only the self-service adapters need it). No
// request is sent to build it; kinds outside knownKindsFirst are discovered lazily.
func (c *runtimeClient) controller() (client.Client, error) {
	c.ctrlOnce.Do(func() {
		discovered, err := apiutil.NewDynamicRESTMapper(c.cfg, c.http)
		if err != nil {
			c.ctrlErr = fmt.Errorf("client for runtime %s: %w: %w", c.runtimeID, ports.ErrRuntimeUnreachable, err)
			return
		}
		c.ctrl, err = client.New(c.cfg, client.Options{HTTPClient: c.http, Mapper: newKnownKindsFirst(discovered)})
		if err != nil {
			c.ctrlErr = fmt.Errorf("client for runtime %s: %w: %w", c.runtimeID, ports.ErrRuntimeUnreachable, err)
		}
	})
	return c.ctrl, c.ctrlErr
}

// newRuntimeClient builds the clients of a runtime. Each request is bounded by timeout (the call as a whole is
// bounded by the caller's context). No request is sent: the typed and dynamic clients need no discovery.
func newRuntimeClient(runtimeID string, kubeconfig []byte, timeout time.Duration) (*runtimeClient, error) {
	cfg, err := restConfigOf(runtimeID, kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	// A few objects per call: a modest limit keeps a burst of runtimes from flooding the operator's network.
	cfg.QPS, cfg.Burst = 20, 40
	cfg.UserAgent = runtimeUserAgent
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	rc := &runtimeClient{runtimeID: runtimeID, kubeconfigHash: sha256.Sum256(kubeconfig), http: httpClient, cfg: cfg}
	if err := rc.buildClients(); err != nil {
		return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	return rc, nil
}

func (c *runtimeClient) buildClients() error {
	var err error
	if c.core.core, err = corev1client.NewForConfigAndClient(c.cfg, c.http); err != nil {
		return err
	}
	if c.core.rbac, err = rbacv1client.NewForConfigAndClient(c.cfg, c.http); err != nil {
		return err
	}
	if c.core.apps, err = appsv1client.NewForConfigAndClient(c.cfg, c.http); err != nil {
		return err
	}
	c.dynamic, err = dynamic.NewForConfigAndClient(c.cfg, c.http)
	return err
}

// clientCache keeps one client per runtime, at most max of them (least recently used go first) and none unused for
// longer than idle. An entry is replaced when the runtime's kubeconfig changes (rotation) and dropped by forget (the
// Runtime is gone).
type clientCache struct {
	mu      sync.Mutex
	max     int
	idle    time.Duration
	now     func() time.Time
	order   *list.List // of *cachedClient, most recently used first
	entries map[string]*list.Element
	build   func(runtimeID string, kubeconfig []byte) (*runtimeClient, error)
}

type cachedClient struct {
	*runtimeClient
	used time.Time
	// version is the version of the kubeconfig Secret the client was built from ("" when unknown).
	version string
}

func newClientCache(maxEntries int, idle time.Duration, now func() time.Time, build func(string, []byte) (*runtimeClient, error)) *clientCache {
	return &clientCache{max: maxEntries, idle: idle, now: now, order: list.New(), entries: map[string]*list.Element{}, build: build}
}

// get returns the client of runtimeID for kubeconfig, building it when there is none or the kubeconfig changed;
// version is the version of the Secret kubeconfig was read from ("" when unknown), which current matches.
// Clients unused for longer than idle go first (the list is in order of use: only those are visited).
func (c *clientCache) get(runtimeID string, kubeconfig []byte, version string) (*runtimeClient, error) {
	hash := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.dropIdleLocked(now)
	if e, ok := c.entries[runtimeID]; ok {
		cc := e.Value.(*cachedClient) // the list holds only *cachedClient
		if cc.kubeconfigHash == hash {
			cc.used, cc.version = now, version
			c.order.MoveToFront(e)
			return cc.runtimeClient, nil
		}
		c.removeLocked(e)
	}
	rc, err := c.build(runtimeID, kubeconfig)
	if err != nil {
		return nil, err
	}
	c.entries[runtimeID] = c.order.PushFront(&cachedClient{runtimeClient: rc, used: now, version: version})
	for c.order.Len() > c.max {
		c.removeLocked(c.order.Back())
	}
	return rc, nil
}

// current returns the kept client of runtimeID when it was built from the kubeconfig Secret at version; nil
// otherwise.
func (c *clientCache) current(runtimeID, version string) *runtimeClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.dropIdleLocked(now)
	e, ok := c.entries[runtimeID]
	if !ok {
		return nil
	}
	cc := e.Value.(*cachedClient) // the list holds only *cachedClient
	if version == "" || cc.version != version {
		return nil
	}
	cc.used = now
	c.order.MoveToFront(e)
	return cc.runtimeClient
}

// dropIdleLocked removes the clients unused for longer than idle (the list is in order of use: only those are
// visited).
func (c *clientCache) dropIdleLocked(now time.Time) {
	for e := c.order.Back(); e != nil && now.Sub(e.Value.(*cachedClient).used) > c.idle; e = c.order.Back() {
		c.removeLocked(e)
	}
}

// forget drops the client of runtimeID.
func (c *clientCache) forget(runtimeID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[runtimeID]; ok {
		c.removeLocked(e)
	}
}

func (c *clientCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *clientCache) removeLocked(e *list.Element) {
	rc := e.Value.(*cachedClient) // the list holds only *cachedClient
	c.order.Remove(e)
	delete(c.entries, rc.runtimeID)
	// Requests in flight finish; the idle connections close now. http.Client.CloseIdleConnections would reach
	// only the outermost of client-go's wrappers, which hide it: CloseIdleConnectionsFor unwraps them down to the
	// *http.Transport (budgetTransport unwraps too).
	utilnet.CloseIdleConnectionsFor(rc.http.Transport)
}

// runtimeAnswer is what a failed request to a runtime's API server tells: the one classification of runtime
// errors. Each port maps it to its error classes (runtimeError, unreachableError, RuntimeIdentities' fail).
type runtimeAnswer int

const (
	// answeredWithStatus: the server answered with an error status other than those below (not found, forbidden,
	// invalid, conflict, ...).
	answeredWithStatus runtimeAnswer = iota
	// noAnswer: no response at all (connection, TLS, a deadline, a cancelled call), or a failure already classified
	// as ports.ErrRuntimeUnreachable (no kubeconfig, one that cannot be parsed).
	noAnswer
	// notAuthorized: 401, the server does not accept the credentials (yet: a new shoot's CA, a rotation).
	notAuthorized
	// notNow: the server is there but cannot serve the request now (503, 504 and ServerTimeout).
	notNow
)

// answerOf classifies the error of a request to a runtime (nil: answeredWithStatus, which callers never ask).
func answerOf(err error) runtimeAnswer {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, ports.ErrRuntimeUnreachable):
		return noAnswer
	case !errors.As(err, &status):
		return noAnswer // a transport error
	case apierrors.IsUnauthorized(err):
		return notAuthorized
	case apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err):
		return notNow
	}
	return answeredWithStatus
}

// unreachableError reports whether err means the runtime's API server did not answer (timeouts, connections that
// fail, credentials it does not accept yet, a server that cannot serve now) rather than answered with a refusal.
func unreachableError(err error) bool {
	return err != nil && answerOf(err) != answeredWithStatus
}

// runtimeError classifies a failed request to a runtime: no answer (unreachableError) is ErrRuntimeUnreachable,
// anything else ErrTransient.
func runtimeError(op, runtimeID string, err error) error {
	if unreachableError(err) {
		return fmt.Errorf("%s in runtime %s: %w: %w", op, runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	return fmt.Errorf("%s in runtime %s: %w: %w", op, runtimeID, ports.ErrTransient, err)
}
