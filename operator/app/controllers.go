package app

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/controllers/shootreaper"
)

// addController sets up the named controller (controllers.Names) with the Deps of its package, filled from the
// ports and settings: each controller gets exactly what it declares it needs. The self-service controllers are set
// up only when their feature is on (their ports are not nil).
func addController(mgr manager.Manager, name string, garden cluster.Cluster, p Ports, s settings) error {
	switch name {
	case gardenercluster.Name:
		return gardenercluster.AddToManager(mgr, gardenercluster.Deps{Clock: p.Clock, Issuer: p.Issuer, Secrets: p.Secrets,
			Shoots: p.Shoots, Policy: s.Kubeconfig, Workers: s.GardenerClusterWorkers})
	case kymaruntime.Name:
		// The shoot reaper runs with the Runtime controller: --controllers has one name for both.
		if err := kymaruntime.AddToManager(mgr, runtimeDeps(garden, p, s)); err != nil {
			return err
		}
		return shootreaper.AddToManager(mgr, shootreaper.Deps{Garden: garden, Namespace: s.Namespaces[0], Clock: p.Clock,
			ServerClock: p.ServerClock, Shoots: p.Shoots, ShootLister: p.ShootLister, Guard: p.Guard, Records: p.Records,
			Bindings: p.Bindings, Registry: p.Registry, Deletion: s.Deletion, ShootUpdates: gardener.ShootUpdates{}})
	case serviceaccountkubeconfig.Name:
		return serviceaccountkubeconfig.AddToManager(mgr, serviceaccountkubeconfig.Deps{Clock: p.Clock, Identities: p.Identities,
			Secrets: p.IdentitySecrets, Access: s.IdentityAccess, RotationFraction: s.Kubeconfig.RotationFraction,
			CleanupTimeout: s.IdentityCleanupTimeout, Workers: s.ServiceAccountKubeconfigWorkers})
	case registrycachesync.Name:
		if p.RegistryCache == nil {
			return nil
		}
		d := *p.RegistryCache
		d.GardenCache, d.Observe, d.Namespaces, d.Clock = garden.GetCache(), gardener.Observer{}, s.Namespaces, p.Clock
		return registrycachesync.AddToManager(mgr, d)
	case auditlogpool.Name:
		al := p.AuditLog
		if al == nil {
			return nil
		}
		return auditlogpool.AddToManager(mgr, auditlogpool.Deps{GardenCache: garden.GetCache(), Observe: gardener.Observer{}, Clock: p.Clock,
			Shoots: p.Shoots, ShootLister: p.ShootLister, Pool: al.Pool, Kind: al.Kind, TenantName: al.TenantName,
			Runtimes: al.Runtimes, Credentials: al.Credentials, Secrets: al.Secrets, CredentialsPolicy: al.CredentialsPolicy})
	}
	return fmt.Errorf("unknown controller %q", name)
}

// runtimeDeps is the Runtime controller's share of the ports and settings.
func runtimeDeps(garden cluster.Cluster, p Ports, s settings) kymaruntime.Deps {
	d := kymaruntime.Deps{Garden: garden, Namespaces: s.Namespaces, Clock: p.Clock, ServerClock: p.ServerClock,
		Shoots: p.Shoots, ShootLister: p.ShootLister, Seeds: p.Seeds, Profiles: p.Profiles, Credentials: p.Credentials, Access: p.Access,
		Configurator: p.Configurator, Guard: p.Guard, Records: p.Records, Bindings: p.Bindings,
		RegistryCredentials: p.RegistryCredentials, Addresses: kymaruntime.Addresses{Addresses: p.Addresses, Cache: p.AddressesSource},
		Bootstrap: kymaruntime.Bootstrap{Source: p.Bootstrap, Cache: p.BootstrapSource, PullSecret: p.BootstrapPullSecret,
			Records: p.BootstrapRecords, Rollout: p.BootstrapRollout},
		Shoot: s.Shoot, Deletion: s.Deletion, DriftPeriod: s.DriftPeriod, AdoptOnly: s.AdoptOnly,
		StatusProgressInterval: s.StatusProgressInterval, Workers: s.RuntimeWorkers, ShootUpdates: gardener.ShootUpdates{}}
	if al := p.AuditLog; al != nil {
		d.AuditLog = kymaruntime.AuditLog{Pool: al.Pool, Kind: al.Kind}
	}
	return d
}
