package app

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/shootreaper"
)

// runtimeDeps builds the Deps of the Runtime controller and of the shoot reaper, which share the adapters of safe
// deletion (the garden's clock, the deletion guard, the KCP's deletion records, the credentials bindings): the
// controller marks shoots for deletion, the reaper deletes them. The audit log pool is added by addControllers
// when the pool is on.
func runtimeDeps(mgr manager.Manager, garden cluster.Cluster, opts Options, clk ports.Clock, shoots *gardener.Shoots,
	runtimes *kube.RuntimeClients) (kymaruntime.Deps, shootreaper.Deps, error) {
	ns := opts.WatchNamespaces[0]
	kcp, live := mgr.GetClient(), mgr.GetAPIReader()
	policy, err := opts.deletionPolicy()
	if err != nil {
		return kymaruntime.Deps{}, shootreaper.Deps{}, err
	}
	serverClock, err := kube.NewServerClock(garden.GetConfig())
	if err != nil {
		return kymaruntime.Deps{}, shootreaper.Deps{}, fmt.Errorf("garden clock: %w", err)
	}
	guard := &kube.DeletionGuard{Cached: kcp, Live: live, Writer: kcp, Namespace: ns}
	records := &kube.DeletionRecords{Cached: kcp, Live: live, Writer: kcp, Namespaces: opts.WatchNamespaces, Namespace: ns}
	// Records are read from the cache, which would start their informer at the first read: on a new leader, after
	// the take-over. Asked for once the caches run, on every replica, a standby is warm for them too.
	if err := mgr.Add(everyReplica(func(ctx context.Context) error {
		if _, err := mgr.GetCache().GetInformer(ctx, &imv1.DeletionRecord{}); err != nil {
			return fmt.Errorf("deletion records cache: %w", err)
		}
		return nil
	})); err != nil {
		return kymaruntime.Deps{}, shootreaper.Deps{}, err
	}
	bindings := &gardener.CredentialsBindings{Live: garden.GetAPIReader(), Writer: garden.GetClient(), Namespace: opts.GardenNamespace()}
	addresses, err := controlPlaneAddresses(mgr, opts.Config, ns)
	if err != nil {
		return kymaruntime.Deps{}, shootreaper.Deps{}, err
	}
	bootstrap, err := bootstrapManifests(mgr, opts.Config, ns)
	if err != nil {
		return kymaruntime.Deps{}, shootreaper.Deps{}, err
	}
	rt := kymaruntime.Deps{
		Garden: garden, Namespaces: opts.WatchNamespaces, ShootUpdates: gardener.ShootUpdates{},
		StatusProgressInterval: opts.Config.Runtime.StatusProgressInterval.Duration, Workers: opts.RuntimeWorkers,
		MaxRetryDelay: opts.Config.Runtime.MaxRetryDelay.Duration,
		Clock:         clk, ServerClock: serverClock,
		Shoot: opts.shootConfig(), Shoots: shoots, ShootLister: shoots, Seeds: shoots, Profiles: shoots, Credentials: shoots,
		// Every Runtime's registry caches (KEB's too) may reference only copies made for it: confirmed by name.
		RegistryCredentials: &gardener.RegistryCacheGarden{Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace()},
		AdoptOnly:           opts.Config.Runtime.AdoptOnlyEnabled(),
		Access:              &kube.AccessObjects{Client: kcp},
		Configurator:        runtimeConfigurator(runtimes, opts.Config),
		DriftPeriod:         opts.Config.Runtime.DriftPeriod.Duration,
		Deletion:            policy, Guard: guard, Records: records, Bindings: bindings,
		Addresses: addresses, Bootstrap: bootstrap,
	}
	reaper := shootreaper.Deps{
		Garden: garden, Namespace: ns, ShootUpdates: gardener.ShootUpdates{},
		Clock: clk, ServerClock: serverClock, Shoots: shoots, ShootLister: shoots,
		// Restored Runtimes are re-created in the KCP.
		Registry: &kube.RuntimeRegistry{Live: live, Writer: kcp, Namespaces: opts.WatchNamespaces},
		Deletion: policy, Guard: guard, Records: records, Bindings: bindings,
	}
	return rt, reaper, nil
}

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
func bootstrapManifests(mgr manager.Manager, cfg *config.OperatorConfig, namespace string) (kymaruntime.Bootstrap, error) {
	if cfg == nil || cfg.Runtime.Bootstrap == nil {
		return kymaruntime.Bootstrap{}, nil
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
		return kymaruntime.Bootstrap{}, fmt.Errorf("runtime.bootstrap: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return kymaruntime.Bootstrap{}, fmt.Errorf("runtime.bootstrap: %w", err)
	}
	allowed := make([]runtimeconfig.BootstrapKind, 0, len(bc.AllowedKinds))
	for _, k := range bc.AllowedKinds {
		allowed = append(allowed, runtimeconfig.BootstrapKind{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace})
	}
	// The rollout in waves reads every Runtime's record from the manager's cache (no request per walk).
	share, maxFailures := bc.Rollout.Policy()
	return kymaruntime.Bootstrap{Source: &kube.BootstrapSource{Reader: c, ConfigMap: key, PullSecret: secret, Allowed: allowed}, Cache: c,
		PullSecret: secret != nil, Records: &kube.RuntimeBootstrapRecords{Cache: mgr.GetClient()},
		Rollout: runtimeconfig.RolloutPolicy{Share: share, MaxFailures: maxFailures}}, nil
}

// objectKey is ref with the operator's namespace where ref names none.
func objectKey(ref config.ObjectRef, defaultNamespace string) client.ObjectKey {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = defaultNamespace
	}
	return key
}

// controlPlaneAddresses sets up the source of the control plane's egress addresses (shoot.acl.configMap): a cache
// holding only that ConfigMap, read by the Addresses port and watched by the Runtime controller, so new addresses
// reach every affected shoot without a restart. Without the key, nothing is set up and ACLs of Runtimes are
// refused (see shoot.NeedsControlPlaneCIDRs).
func controlPlaneAddresses(mgr manager.Manager, cfg *config.OperatorConfig, runtimeNamespace string) (kymaruntime.Addresses, error) {
	if cfg == nil || cfg.Shoot.ACL.ConfigMap == nil {
		return kymaruntime.Addresses{}, nil
	}
	key := client.ObjectKey{Namespace: cfg.Shoot.ACL.ConfigMap.Namespace, Name: cfg.Shoot.ACL.ConfigMap.Name}
	if key.Namespace == "" {
		key.Namespace = runtimeNamespace
	}
	cmCache, err := kube.NewControlPlaneAddressesCache(mgr.GetConfig(), mgr.GetScheme(), key)
	if err != nil {
		return kymaruntime.Addresses{}, fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	if err := mgr.Add(cmCache); err != nil {
		return kymaruntime.Addresses{}, fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	return kymaruntime.Addresses{Addresses: &kube.ControlPlaneAddresses{Reader: cmCache, Key: key}, Cache: cmCache}, nil
}

// everyReplica is a runnable that runs on every replica, the standby too, once the caches are synced.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection is false: see everyReplica.
func (everyReplica) NeedLeaderElection() bool { return false }
