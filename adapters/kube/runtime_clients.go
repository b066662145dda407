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
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// KubeconfigSource returns the current kubeconfig of a runtime.
type KubeconfigSource interface {
	// Kubeconfig returns the kubeconfig; errors wrap ports.ErrRuntimeUnreachable when there is none (yet).
	Kubeconfig(ctx context.Context, runtimeID string) ([]byte, error)
}

// SecretKubeconfigs reads kubeconfig-<runtimeID> (key config) in Namespace of KCP, through Reader: a live reader in
// the operator (its cache keeps Secrets without their data, see SecretCacheTransform).
type SecretKubeconfigs struct {
	Reader    client.Reader
	Namespace string
}

// Kubeconfig implements KubeconfigSource.
func (s SecretKubeconfigs) Kubeconfig(ctx context.Context, runtimeID string) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: kubeconfig.SecretName(runtimeID)}, secret); err != nil {
		return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	kc := secret.Data[kubeconfig.SecretKey]
	if len(kc) == 0 {
		return nil, fmt.Errorf("kubeconfig of runtime %s is empty: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	return kc, nil
}

// runtimeClient is what the configurator talks to one runtime with: a typed and a dynamic client over one HTTP
// client (one connection pool), built from one version of the runtime's kubeconfig.
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
}

// typedClients are the API groups the configurator writes typed. Not a kubernetes.Clientset: that builds a REST
// client for each of its ~50 groups, which at one client per runtime was a fifth of the operator's heap at fleet
// size (docs/operations/scale.md).
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

// newRuntimeClient builds the clients of a runtime. Each request is bounded by timeout (the call as a whole is
// bounded by the caller's context). No request is sent: the typed and dynamic clients need no discovery.
func newRuntimeClient(runtimeID string, kubeconfig []byte, timeout time.Duration) (*runtimeClient, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	cfg.Timeout = timeout
	// A few objects per call: a modest limit keeps a burst of runtimes from flooding the operator's network.
	cfg.QPS, cfg.Burst = 20, 40
	cfg.UserAgent = "kim-runtime-configurator"
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
}

func newClientCache(maxEntries int, idle time.Duration, now func() time.Time, build func(string, []byte) (*runtimeClient, error)) *clientCache {
	return &clientCache{max: maxEntries, idle: idle, now: now, order: list.New(), entries: map[string]*list.Element{}, build: build}
}

// get returns the client of runtimeID for kubeconfig, building it when there is none or the kubeconfig changed.
// Clients unused for longer than idle go first (the list is in order of use: only those are visited).
func (c *clientCache) get(runtimeID string, kubeconfig []byte) (*runtimeClient, error) {
	hash := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for e := c.order.Back(); e != nil && now.Sub(e.Value.(*cachedClient).used) > c.idle; e = c.order.Back() {
		c.removeLocked(e)
	}
	if e, ok := c.entries[runtimeID]; ok {
		cc := e.Value.(*cachedClient) // the list holds only *cachedClient
		if cc.kubeconfigHash == hash {
			cc.used = now
			c.order.MoveToFront(e)
			return cc.runtimeClient, nil
		}
		c.removeLocked(e)
	}
	rc, err := c.build(runtimeID, kubeconfig)
	if err != nil {
		return nil, err
	}
	c.entries[runtimeID] = c.order.PushFront(&cachedClient{runtimeClient: rc, used: now})
	for c.order.Len() > c.max {
		c.removeLocked(c.order.Back())
	}
	return rc, nil
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
	rc.http.CloseIdleConnections() // requests in flight finish; the pool goes with the client
}

// unreachableError reports whether err means the runtime's API server did not answer (timeouts, connections that
// fail, credentials it does not accept yet) rather than answered with a refusal.
func unreachableError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, ports.ErrRuntimeUnreachable) {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // no answer from the server at all: a transport error
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnauthorized(err)
}
