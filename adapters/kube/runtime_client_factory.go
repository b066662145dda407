package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// RuntimeClientFactory returns a client of a runtime's API server. The self-service adapters (registry cache,
// audit log credentials) take one so that how runtime clients are made (a new client per call today, a cache of
// one client per runtime later) can change without them. To unify with the runtime-client cache of issue #14
// (branch feat/inside: clientCache in adapters/kube/runtime_clients.go, one client per runtime ID and kubeconfig
// hash, runtime.timeout per call), expose that cache's get as a RuntimeClientFactory and pass it in
// operator/app/ports_selfservice.go instead of NewRuntimeClientFactory; the adapters stay as they are.
type RuntimeClientFactory func(ctx context.Context, runtimeID string) (client.Client, error)

// RuntimeRequestTimeout bounds every request to a runtime's API server: one slow runtime must not hold a worker.
const RuntimeRequestTimeout = 15 * time.Second

// NewRuntimeClientFactory builds clients from the runtime's kubeconfig Secret (kubeconfig-<runtimeID> in namespace,
// read through kcp) with the given scheme (nil: client-go's) and RuntimeRequestTimeout per request. Response bodies
// of requests whose context carries a budget (withResponseBudget) are counted against it on the wire; the kinds
// the self-service adapters use are mapped without discovery (knownKindsFirst). Errors wrap
// ports.ErrRuntimeUnreachable.
func NewRuntimeClientFactory(kcp client.Reader, namespace string, scheme *runtime.Scheme) RuntimeClientFactory {
	return func(ctx context.Context, runtimeID string) (client.Client, error) {
		s := &corev1.Secret{}
		if err := kcp.Get(ctx, client.ObjectKey{Namespace: namespace, Name: kubeconfig.SecretName(runtimeID)}, s); err != nil {
			return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
		}
		kc := s.Data[kubeconfig.SecretKey]
		if len(kc) == 0 {
			return nil, fmt.Errorf("kubeconfig of runtime %s is empty: %w", runtimeID, ports.ErrRuntimeUnreachable)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
		}
		cfg.Timeout = RuntimeRequestTimeout
		cfg.Wrap(withResponseBudgets)
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
		}
		discovered, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme, HTTPClient: httpClient, Mapper: newKnownKindsFirst(discovered)})
		if err != nil {
			return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
		}
		return c, nil
	}
}

// runtimeError classifies a failed request to a runtime: no answer is ErrRuntimeUnreachable, anything else
// ErrTransient.
func runtimeError(op, runtimeID string, err error) error {
	if isUnreachable(err) {
		return fmt.Errorf("%s in runtime %s: %w: %w", op, runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	return fmt.Errorf("%s in runtime %s: %w: %w", op, runtimeID, ports.ErrTransient, err)
}
