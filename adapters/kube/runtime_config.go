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

// DefaultRuntimeTimeout bounds one Configure call: a runtime API server that does not answer holds a worker no
// longer.
const DefaultRuntimeTimeout = 10 * time.Second

// RuntimeConfigurator implements ports.RuntimeConfigurator against the runtimes' API servers, through the runtime
// clients (one cached client per runtime, rebuilt when the kubeconfig rotates, dropped by Forget) and with a
// timeout on every call.
type RuntimeConfigurator struct {
	// Clients reach the runtimes (required).
	Clients *RuntimeClients
	// Timeout bounds one Configure call (0: DefaultRuntimeTimeout).
	Timeout time.Duration
}

var _ ports.RuntimeConfigurator = (*RuntimeConfigurator)(nil)

func (r *RuntimeConfigurator) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultRuntimeTimeout
}

// CachedClients is the number of runtime clients kept (for tests and metrics).
func (r *RuntimeConfigurator) CachedClients() int { return r.Clients.Len() }

// Forget implements ports.RuntimeConfigurator.
func (r *RuntimeConfigurator) Forget(runtimeID string) { r.Clients.Forget(runtimeID) }

// Configure implements ports.RuntimeConfigurator. The namespace comes first, alone: the ConfigMap and the
// bootstrap manifests live in it, and its request opens the pass's one connection to the runtime (HTTP/2), which
// the OpenIDConnect resources and the bindings, configured alongside the ConfigMap after it, share. Started
// together on a client without a connection, each first request dialled its own: three TLS handshakes a pass,
// each a signature with the runtime's key (docs/operations/scale.md).
func (r *RuntimeConfigurator) Configure(ctx context.Context, d runtimeconfig.Desired) (runtimeconfig.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	c, err := r.Clients.get(ctx, d.RuntimeID)
	if err != nil {
		o := runtimeconfig.Failed(runtimeconfig.ReasonRuntimeAPIServerUnreachable, err.Error())
		return runtimeconfig.Result{Namespace: o, ProvisioningInfo: o, OIDC: o, Administrators: o, Bootstrap: bootstrapSkipped(d, o)}, err
	}
	var res runtimeconfig.Result
	res.Namespace = ensureNamespace(ctx, c)
	var wg sync.WaitGroup
	wg.Go(func() { res.OIDC = configureOIDC(ctx, c, d) })
	wg.Go(func() { res.Administrators = configureBindings(ctx, c, d) })
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
