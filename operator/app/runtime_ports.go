package app

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/operator/config"
)

// runtimeClients builds the one way to the runtimes' API servers every runtime-facing adapter gets: one cached
// client per runtime, built from its kubeconfig Secret read live (the manager's cache holds Secrets without their
// data) and used again while the cache shows the version it was read at, every request bounded by
// kube.RuntimeRequestTimeout.
func runtimeClients(cached, live client.Reader, namespace string) *kube.RuntimeClients {
	return kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: kube.SecretKubeconfigs{Reader: live, Cache: cached, Namespace: namespace}})
}

// runtimeConfigurator builds the configurator of the objects inside runtimes, every call bounded by
// runtime.timeout.
func runtimeConfigurator(clients *kube.RuntimeClients, cfg *config.OperatorConfig) *kube.RuntimeConfigurator {
	timeout := config.DefaultRuntimeTimeout
	if cfg != nil && cfg.Runtime.Timeout.Duration > 0 {
		timeout = cfg.Runtime.Timeout.Duration
	}
	return &kube.RuntimeConfigurator{Clients: clients, Timeout: timeout}
}

// bootstrapManifests sets up the source of the bootstrap manifests (runtime.bootstrap): a cache holding only the
// ConfigMap and the pull Secret, read by the Bootstrap port and watched by the Runtime controller, and the Runtimes'
// records the rollout in waves derives its state from. Without the key nothing is set up and no bootstrap is done.
func bootstrapManifests(mgr manager.Manager, cfg *config.OperatorConfig, namespace string, p *Ports) error {
	if cfg == nil || cfg.Runtime.Bootstrap == nil {
		return nil
	}
	bc := cfg.Runtime.Bootstrap
	key := objectKey(bc.ConfigMap, namespace)
	var secret *client.ObjectKey
	if bc.PullSecret != nil {
		k := objectKey(*bc.PullSecret, namespace)
		secret = &k
	}
	c, err := kube.NewBootstrapCache(mgr.GetConfig(), mgr.GetScheme(), key, secret)
	if err != nil {
		return fmt.Errorf("runtime.bootstrap: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("runtime.bootstrap: %w", err)
	}
	allowed := make([]runtimeconfig.BootstrapKind, 0, len(bc.AllowedKinds))
	for _, k := range bc.AllowedKinds {
		allowed = append(allowed, runtimeconfig.BootstrapKind{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace})
	}
	p.Bootstrap, p.BootstrapSource = &kube.BootstrapSource{Reader: c, ConfigMap: key, PullSecret: secret, Allowed: allowed}, c
	p.BootstrapPullSecret = secret != nil
	// The rollout in waves reads every Runtime's record from the manager's cache (no request per walk).
	share, maxFailures := bc.Rollout.Policy()
	p.BootstrapRecords = &kube.RuntimeBootstrapRecords{Cache: mgr.GetClient()}
	p.BootstrapRollout = runtimeconfig.RolloutPolicy{Share: share, MaxFailures: maxFailures}
	return nil
}

// objectKey is ref with the operator's namespace where ref names none.
func objectKey(ref config.ObjectRef, defaultNamespace string) client.ObjectKey {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = defaultNamespace
	}
	return key
}
