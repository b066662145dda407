package app

import (
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/dns"
	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
)

// GardenerKubeconfigSecret is the Secret of the operator's namespace holding its Gardener credentials
// (config/manager mounts it): never copied anywhere, whatever labels it carries.
const GardenerKubeconfigSecret = "kim-gardener-kubeconfig"

// auditLogCredentialsPolicy is where tenants' read credentials may come from: the pool's namespace, or the
// operator's for a cluster-scoped pool (docs/audit-log-access.md).
func auditLogCredentialsPolicy(poolNamespace, operatorNamespace string) auditlog.CredentialsPolicy {
	if poolNamespace == "" {
		poolNamespace = operatorNamespace
	}
	return auditlog.CredentialsPolicy{Namespace: poolNamespace, OperatorSecrets: []string{GardenerKubeconfigSecret}}
}

// registryCacheDeps builds the registry cache controller's Deps; nil when registryCache.enabled is false (the
// controller is not set up).
//
// clients reach the runtimes (the registry cache source): the operator's kube.RuntimeClients, shared with every
// other runtime-facing adapter.
func registryCacheDeps(mgr manager.Manager, garden cluster.Cluster, opts Options, clk ports.Clock, clients kube.RuntimeClientFactory) *registrycachesync.Deps {
	rc := opts.Config.RegistryCache
	if rc.Enabled != nil && !*rc.Enabled {
		return nil
	}
	d := &registrycachesync.Deps{GardenCache: garden.GetCache(), Observe: gardener.Observer{}, Namespaces: opts.WatchNamespaces, Clock: clk,
		Runtimes: &kube.RegistryCacheRuntimes{Client: mgr.GetClient(), Live: mgr.GetAPIReader()},
		Source: &kube.RegistryCacheSource{Clients: clients,
			Limits: registrycache.Limits{MaxConfigs: rc.MaxConfigsPerRuntime, MaxListBytes: rc.MaxListBytesPerRuntime}},
		Garden: &gardener.RegistryCacheGarden{Cached: garden.GetClient(), Live: garden.GetAPIReader(), Writer: garden.GetClient(),
			Namespace: opts.GardenNamespace()},
		Ledger:   &kube.RegistryCacheLedger{Cached: mgr.GetClient(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient()},
		Interval: rc.SyncInterval.Duration, Workers: rc.Workers, ListenerPort: rc.ListenerPort,
		ListenerTrust: registrycachesync.Trust{GatewayPrincipal: rc.ListenerTrust.GatewayPrincipal,
			OperatorPrincipal: rc.ListenerTrust.OperatorPrincipal},
	}
	if rc.CheckUpstreamDNS == nil || *rc.CheckUpstreamDNS {
		d.Resolver = dns.Resolver{}
	}
	return d
}

// auditLogPoolDeps builds the audit log pool controller's Deps, with which dedicated audit log tenants are
// claimed, kept and released; nil when shoot.auditLog.pool.enabled is false (the controller is not set up, and
// provisioning claims no tenant). The pool's namespace defaults to the operator's and must be watched; a
// cluster-scoped pool has none.
//
// clients reach the runtimes (the Secret writer of the tenants' credentials), as in registryCacheDeps.
func auditLogPoolDeps(mgr manager.Manager, garden cluster.Cluster, opts Options, clk ports.Clock, shoots *gardener.Shoots,
	clients kube.RuntimeClientFactory) (*auditlogpool.Deps, error) {
	pc := opts.Config.Shoot.AuditLog.Pool
	if !pc.Enabled {
		return nil, nil
	}
	ns := opts.WatchNamespaces[0]
	pool := &kube.AuditLogPool{Cache: mgr.GetCache(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: pc.Namespace}
	if pc.Scope == config.PoolScopeCluster {
		pool.Namespace = ""
	} else if pool.Namespace == "" {
		pool.Namespace = ns
	}
	if pool.Namespace != "" && !slices.Contains(opts.WatchNamespaces, pool.Namespace) {
		return nil, fmt.Errorf("audit log pool: shoot.auditLog.pool.namespace %s is not a watched namespace (%v); the operator reads the pool through its cache",
			pool.Namespace, opts.WatchNamespaces)
	}
	pool.CredentialsNamespace = ns // a cluster-scoped pool's read credentials are in the operator's namespace
	return &auditlogpool.Deps{GardenCache: garden.GetCache(), Observe: gardener.Observer{}, Clock: clk, Shoots: shoots, ShootLister: shoots,
		Pool: pool, Kind: kube.AuditLogGVK, TenantName: kube.TenantName,
		Runtimes:          &kube.AuditLogRuntimes{Live: mgr.GetAPIReader(), Namespaces: opts.WatchNamespaces},
		Credentials:       &kube.KCPSecrets{Live: mgr.GetAPIReader()},
		Secrets:           &kube.RuntimeSecrets{Clients: clients},
		CredentialsPolicy: auditLogCredentialsPolicy(pool.Namespace, ns)}, nil
}
