package app

import (
	"fmt"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
)

// Ports are the adapters the composition root built, before each controller gets its share of them in its
// package's Deps (controllers.go). No controller sees this struct.
type Ports struct {
	Clock       ports.Clock
	Shoots      ports.Shoots
	ShootLister ports.ShootLister
	Seeds       ports.Seeds
	// Profiles gives the zones a cloud profile offers in a region (worker pools that come without zones).
	Profiles     ports.CloudProfiles
	Credentials  ports.CredentialsMigrator
	Issuer       ports.KubeconfigIssuer
	Secrets      ports.KubeconfigSecretStore
	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	Guard        ports.DeletionGuard
	// Records are the KCP's own records of deletions (DeletionRecord objects).
	Records ports.DeletionRecords
	// Bindings labels the credentials bindings of deleted runtimes as KEB's deprovisioning expects; nil: never.
	Bindings    ports.CredentialsBindings
	ServerClock ports.ServerClock
	Registry    ports.RuntimeRegistry
	// Identities reaches runtimes through their admin kubeconfigs for least-privilege kubeconfigs (ServiceAccounts,
	// RBAC, TokenRequests); IdentitySecrets stores those kubeconfigs in the KCP.
	Identities      ports.RuntimeIdentities
	IdentitySecrets ports.IdentityKubeconfigStore
	// Addresses are the control plane's egress CIDRs; nil when shoot.acl.configMap is not configured.
	// AddressesSource is the cache holding their ConfigMap; nil with Addresses.
	Addresses       ports.ControlPlaneAddresses
	AddressesSource cache.Cache
	// Bootstrap reads the landscape's bootstrap manifests and pull secret (runtime.bootstrap); nil when none are
	// configured. BootstrapSource is the cache holding them; nil with Bootstrap. BootstrapPullSecret: it holds a
	// pull Secret too. BootstrapRecords and BootstrapRollout: the rollout in waves (runtime.bootstrap.rollout).
	Bootstrap           ports.BootstrapSource
	BootstrapSource     cache.Cache
	BootstrapPullSecret bool
	BootstrapRecords    ports.RuntimeBootstrapLister
	BootstrapRollout    runtimeconfig.RolloutPolicy
	// RegistryCredentials confirms the copies of registry credentials Runtimes reference; nil: every reference is
	// refused.
	RegistryCredentials ports.RegistryCredentialOwners
	// RegistryCache and AuditLog are the ports of the customer self-service controllers (RegistryCache: its Deps but
	// what every controller shares); nil: switched off by configuration (the controller sets nothing up).
	RegistryCache *registrycachesync.Deps
	AuditLog      *AuditLogPorts
}

// Override changes the ports before the controllers are set up: tests replace an adapter (count or fail Gardener
// calls, move a fake clock). The production binary passes none.
type Override func(*Ports)

// WithClock replaces the wall clock every controller decides on.
func WithClock(c ports.Clock) Override {
	return func(p *Ports) { p.Clock = c }
}

// WithIssuer replaces the Gardener kubeconfig issuer.
func WithIssuer(issuer ports.KubeconfigIssuer) Override {
	return func(p *Ports) { p.Issuer = issuer }
}

// buildPorts builds every adapter: this is the only place that does (the composition root).
func buildPorts(mgr manager.Manager, garden cluster.Cluster, opts Options) (Ports, error) {
	ns := opts.WatchNamespaces[0]
	kcp, live := mgr.GetClient(), mgr.GetAPIReader()
	shoots := &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace(),
		RuntimeNamespace: ns, Observe: countGardenerRequest(NewGardenerRequests(nil))}
	// A dedicated client: the shared garden scheme does not carry AdminKubeconfigRequest. It uses the garden
	// config and so the configured QPS and burst.
	issuerClient, err := gardener.NewIssuerClient(garden.GetConfig())
	if err != nil {
		return Ports{}, err
	}
	serverClock, err := kube.NewServerClock(garden.GetConfig())
	if err != nil {
		return Ports{}, err
	}
	// Every adapter that reaches into runtimes does so through these clients.
	runtimes := runtimeClients(kcp, live, ns)
	p := Ports{
		Clock:  clock.RealClock{},
		Shoots: shoots, ShootLister: shoots, Seeds: shoots, Profiles: shoots, Credentials: shoots,
		Issuer:       gardener.NewAdminKubeconfigIssuer(issuerClient, opts.GardenNamespace()),
		Secrets:      kube.NewKubeconfigSecretStore(kcp, live, kcp),
		Access:       &kube.AccessObjects{Client: kcp},
		Configurator: runtimeConfigurator(runtimes, opts.Config),
		Guard:        &kube.DeletionGuard{Cached: kcp, Live: live, Writer: kcp, Namespace: ns},
		Records:      &kube.DeletionRecords{Cached: kcp, Live: live, Writer: kcp, Namespaces: opts.WatchNamespaces, Namespace: ns},
		ServerClock:  serverClock,
		Bindings:     &gardener.CredentialsBindings{Live: garden.GetAPIReader(), Writer: garden.GetClient(), Namespace: opts.GardenNamespace()},
		Registry:     &kube.RuntimeRegistry{Live: live, Writer: kcp, Namespaces: opts.WatchNamespaces},
		// Every Runtime's registry caches (KEB's too) may reference only copies made for it: confirmed by name.
		RegistryCredentials: &gardener.RegistryCacheGarden{Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace()},
		// Runtimes are reached through the admin kubeconfig Secrets in the KCP, each call bounded by a timeout.
		Identities:      &kube.RuntimeIdentities{KCP: live, Clients: runtimes},
		IdentitySecrets: kube.NewIdentityKubeconfigStore(kcp, live, kcp),
	}
	if err := controlPlaneAddresses(mgr, opts.Config, ns, &p); err != nil {
		return Ports{}, err
	}
	if p.RegistryCache, p.AuditLog, err = selfServicePorts(mgr, garden, opts, runtimes.Controller); err != nil {
		return Ports{}, err
	}
	if err := bootstrapManifests(mgr, opts.Config, ns, &p); err != nil {
		return Ports{}, err
	}
	return p, nil
}

// controlPlaneAddresses sets up the source of the control plane's egress addresses (shoot.acl.configMap): a cache
// holding only that ConfigMap, read by the Addresses port and watched by the Runtime controller, so new addresses
// reach every affected shoot without a restart. Without the key, nothing is set up and ACLs of Runtimes are
// refused (see shoot.NeedsControlPlaneCIDRs).
func controlPlaneAddresses(mgr manager.Manager, cfg *config.OperatorConfig, runtimeNamespace string, p *Ports) error {
	if cfg == nil || cfg.Shoot.ACL.ConfigMap == nil {
		return nil
	}
	key := client.ObjectKey{Namespace: cfg.Shoot.ACL.ConfigMap.Namespace, Name: cfg.Shoot.ACL.ConfigMap.Name}
	if key.Namespace == "" {
		key.Namespace = runtimeNamespace
	}
	cmCache, err := kube.NewControlPlaneAddressesCache(mgr.GetConfig(), mgr.GetScheme(), key)
	if err != nil {
		return fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	if err := mgr.Add(cmCache); err != nil {
		return fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	p.Addresses, p.AddressesSource = &kube.ControlPlaneAddresses{Reader: cmCache, Key: key}, cmCache
	return nil
}
