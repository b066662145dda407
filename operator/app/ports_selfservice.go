package app

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/dns"
	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
)

// WithRuntimeClients replaces how the self-service adapters make clients of runtimes.
func WithRuntimeClients(clients kube.RuntimeClientFactory) Override {
	return func(p *Ports) {
		if rc := p.RegistryCache; rc != nil {
			src := kube.RegistryCacheSource{}
			if have, ok := rc.Source.(*kube.RegistryCacheSource); ok {
				src = *have // the landscape's limits stay
			}
			src.Clients = clients
			rc.Source = &src
		}
		if al := p.AuditLog; al != nil {
			al.Secrets = &kube.RuntimeSecrets{Clients: clients}
		}
	}
}

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

// AuditLogPorts are what dedicated audit log tenants are claimed, kept and released with.
type AuditLogPorts struct {
	Pool ports.AuditLogPool
	// Kind is the AuditLog resource the pool is made of; Namespace is the pool's namespace ("" for a cluster-scoped
	// pool).
	Kind       schema.GroupVersionKind
	Namespace  string
	TenantName func(namespace, name string) string
	Runtimes   ports.AuditLogRuntimes
	// Credentials reads the tenants' read credentials in the KCP; Secrets writes them into runtimes.
	Credentials       ports.AuditLogCredentials
	Secrets           ports.RuntimeSecretWriter
	CredentialsPolicy auditlog.CredentialsPolicy
}

// selfServicePorts builds the ports of the registry cache and audit log pool controllers (nil: switched off).
//
// clients reach the runtimes (the registry cache source and the runtime Secret writer): the operator's
// kube.RuntimeClients, shared with every other runtime-facing adapter.
func selfServicePorts(mgr manager.Manager, garden cluster.Cluster, opts Options, clients kube.RuntimeClientFactory) (*registrycachesync.Deps, *AuditLogPorts, error) {
	var (
		rcPorts *registrycachesync.Deps
		alPorts *AuditLogPorts
	)
	ns := opts.WatchNamespaces[0]
	cfg := opts.Config
	if cfg == nil {
		return nil, nil, nil
	}
	if rc := cfg.RegistryCache; rc.Enabled == nil || *rc.Enabled {
		// The registry cache controller's Deps but what every controller shares (filled in controllers.go).
		p := &registrycachesync.Deps{
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
			p.Resolver = dns.Resolver{}
		}
		rcPorts = p
	}
	if pc := cfg.Shoot.AuditLog.Pool; pc.Enabled {
		pool := &kube.AuditLogPool{Cache: mgr.GetCache(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: pc.Namespace}
		if pc.Scope == config.PoolScopeCluster {
			pool.Namespace = ""
		} else if pool.Namespace == "" {
			pool.Namespace = ns
		}
		if pool.Namespace != "" && !slices.Contains(opts.WatchNamespaces, pool.Namespace) {
			return nil, nil, fmt.Errorf("audit log pool: shoot.auditLog.pool.namespace %s is not a watched namespace (%v); the operator reads the pool through its cache",
				pool.Namespace, opts.WatchNamespaces)
		}
		pool.CredentialsNamespace = ns // a cluster-scoped pool's read credentials are in the operator's namespace
		alPorts = &AuditLogPorts{Pool: pool, Kind: kube.AuditLogGVK, Namespace: pool.Namespace, TenantName: kube.TenantName,
			Runtimes:          &kube.AuditLogRuntimes{Live: mgr.GetAPIReader(), Namespaces: opts.WatchNamespaces},
			Credentials:       &kube.KCPSecrets{Live: mgr.GetAPIReader()},
			Secrets:           &kube.RuntimeSecrets{Clients: clients},
			CredentialsPolicy: auditLogCredentialsPolicy(pool.Namespace, ns)}
	}
	return rcPorts, alPorts, nil
}
