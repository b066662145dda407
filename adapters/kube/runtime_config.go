package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

func typesUID(s string) types.UID { return types.UID(s) }

// Defaults of the RuntimeConfigurator.
const (
	// DefaultRuntimeTimeout bounds one Configure call: a runtime API server that does not answer holds a worker no
	// longer.
	DefaultRuntimeTimeout = 10 * time.Second
	// DefaultMaxRuntimeClients bounds the clients kept (least recently used go first): a client holds a connection
	// pool, and a runtime is configured only when something changed or its drift period passed.
	DefaultMaxRuntimeClients = 1000
	// DefaultRuntimeClientIdle is how long an unused client is kept. Its connections close after 90 s idle anyway
	// (client-go's transport), so a client kept longer saves only parsing a kubeconfig, and at fleet size the kept
	// clients were a third of the operator's heap (docs/operations/scale.md).
	DefaultRuntimeClientIdle = 2 * time.Minute
)

// RuntimeConfigurator implements ports.RuntimeConfigurator against the runtimes' API servers, with one cached
// client per runtime (rebuilt when the kubeconfig rotates, dropped by Forget) and a timeout on every call.
type RuntimeConfigurator struct {
	// Kubeconfigs returns a runtime's kubeconfig (the KCP Secret).
	Kubeconfigs KubeconfigSource
	// Timeout bounds one Configure call (0: DefaultRuntimeTimeout).
	Timeout time.Duration
	// MaxClients bounds the cached clients (0: DefaultMaxRuntimeClients).
	MaxClients int

	once    sync.Once
	clients *clientCache
}

var _ ports.RuntimeConfigurator = (*RuntimeConfigurator)(nil)

func (r *RuntimeConfigurator) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultRuntimeTimeout
}

func (r *RuntimeConfigurator) cache() *clientCache {
	r.once.Do(func() {
		maxClients := r.MaxClients
		if maxClients <= 0 {
			maxClients = DefaultMaxRuntimeClients
		}
		timeout := r.timeout()
		r.clients = newClientCache(maxClients, DefaultRuntimeClientIdle, time.Now,
			func(id string, kc []byte) (*runtimeClient, error) { return newRuntimeClient(id, kc, timeout) })
	})
	return r.clients
}

// CachedClients is the number of runtime clients kept (for tests and metrics).
func (r *RuntimeConfigurator) CachedClients() int { return r.cache().len() }

// Forget implements ports.RuntimeConfigurator.
func (r *RuntimeConfigurator) Forget(runtimeID string) { r.cache().forget(runtimeID) }

// Configure implements ports.RuntimeConfigurator. The namespace comes first (the ConfigMap and the bootstrap
// manifests live in it); the OpenIDConnect resources and the bindings are configured meanwhile.
func (r *RuntimeConfigurator) Configure(ctx context.Context, d runtimeconfig.Desired) (runtimeconfig.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	kc, err := r.Kubeconfigs.Kubeconfig(ctx, d.RuntimeID)
	var c *runtimeClient
	if err == nil {
		c, err = r.cache().get(d.RuntimeID, kc)
	}
	if err != nil {
		o := runtimeconfig.Failed(runtimeconfig.ReasonRuntimeAPIServerUnreachable, err.Error())
		return runtimeconfig.Result{Namespace: o, ProvisioningInfo: o, OIDC: o, Administrators: o, Bootstrap: bootstrapSkipped(d, o)}, err
	}
	var res runtimeconfig.Result
	var wg sync.WaitGroup
	wg.Go(func() { res.OIDC = configureOIDC(ctx, c, d) })
	wg.Go(func() { res.Administrators = configureBindings(ctx, c, d) })
	res.Namespace = ensureNamespace(ctx, c)
	if res.Namespace.Done {
		res.ProvisioningInfo = applyProvisioningInfo(ctx, c, d)
		res.Bootstrap = configureBootstrap(ctx, c, d.Bootstrap)
	} else {
		skipped := runtimeconfig.Outcome{Skipped: true, Reason: res.Namespace.Reason,
			Message: "Not attempted: namespace kyma-system is not there. " + res.Namespace.Message}
		if res.Namespace.Reason == runtimeconfig.ReasonKymaSystemNSError {
			skipped.Reason = runtimeconfig.ReasonConfigMapError
		}
		res.ProvisioningInfo, res.Bootstrap = skipped, bootstrapSkipped(d, skipped)
	}
	wg.Wait()
	for _, o := range []runtimeconfig.Outcome{res.Namespace, res.ProvisioningInfo, res.OIDC, res.Administrators, res.Bootstrap} {
		if o.Reason == runtimeconfig.ReasonRuntimeAPIServerUnreachable {
			return res, fmt.Errorf("runtime %s: %w: %s", d.RuntimeID, ports.ErrRuntimeUnreachable, o.Message)
		}
	}
	return res, nil
}

// outcome turns the error of a part into its outcome: unreachable, refused as invalid (permanent) or failed.
func outcome(err error, failed runtimeconfig.Reason, what string) runtimeconfig.Outcome {
	if unreachableError(err) {
		return runtimeconfig.Failed(runtimeconfig.ReasonRuntimeAPIServerUnreachable, fmt.Sprintf("%s: the runtime's API server did not answer: %v", what, err))
	}
	o := runtimeconfig.Failed(failed, fmt.Sprintf("%s: %v", what, err))
	o.Permanent = isInvalid(err)
	return o
}

func ensureNamespace(ctx context.Context, c *runtimeClient) runtimeconfig.Outcome {
	ns := corev1ac.Namespace(runtimeconfig.Namespace)
	if _, err := c.core.CoreV1().Namespaces().Apply(ctx, ns, applyOptions()); err != nil {
		return outcome(err, runtimeconfig.ReasonKymaSystemNSError, "apply namespace kyma-system")
	}
	return runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, "Namespace kyma-system exists.")
}

func applyProvisioningInfo(ctx context.Context, c *runtimeClient, d runtimeconfig.Desired) runtimeconfig.Outcome {
	cm := corev1ac.ConfigMap(runtimeconfig.ProvisioningInfoName, runtimeconfig.Namespace).
		WithLabels(map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}).
		WithData(map[string]string{runtimeconfig.ProvisioningInfoKey: d.ProvisioningInfo})
	if _, err := c.core.CoreV1().ConfigMaps(runtimeconfig.Namespace).Apply(ctx, cm, applyOptions()); err != nil {
		return outcome(err, runtimeconfig.ReasonConfigMapError, "apply ConfigMap kyma-system/"+runtimeconfig.ProvisioningInfoName)
	}
	return runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "The kyma-provisioning-info ConfigMap is up to date.")
}

// applyOptions are those of every write: server-side apply as field manager kim, taking over fields others set
// (a value someone changed by hand is set back).
func applyOptions() metav1.ApplyOptions {
	return metav1.ApplyOptions{FieldManager: runtimeconfig.FieldManager, Force: true}
}
