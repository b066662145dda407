package app

import (
	"fmt"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/controllers/shootreaper"
)

// addControllers builds every adapter, each into the Deps of the controllers that use it (this is the only place
// adapters are built: the composition root), and sets up the selected controllers (names of controllers.Names, in
// that order), each with its package's AddToManager. Every Deps is built whichever controllers are selected, so a
// configuration error stops the operator whatever --controllers says. The self-service controllers are set up only
// when their feature is on (their Deps are not nil).
func addControllers(mgr manager.Manager, garden cluster.Cluster, opts Options, selected []string, r replacements) error {
	var clk ports.Clock = clock.RealClock{}
	if r.clock != nil {
		clk = r.clock
	}
	ns := opts.WatchNamespaces[0]
	// One Shoots adapter for every controller: the Gardener requests of all of them are counted in one place.
	shoots := &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace(),
		RuntimeNamespace: ns, Observe: countGardenerRequest(NewGardenerRequests(nil))}
	// Every adapter that reaches into runtimes does so through these clients.
	runtimes := runtimeClients(mgr.GetClient(), mgr.GetAPIReader(), ns)
	gc, err := gardenerClusterDeps(mgr, garden, opts, clk, shoots)
	if err != nil {
		return err
	}
	if r.issuer != nil {
		gc.Issuer = r.issuer
	}
	rt, reaper, err := runtimeDeps(mgr, garden, opts, clk, shoots, runtimes)
	if err != nil {
		return err
	}
	if r.configurator != nil {
		rt.Configurator = r.configurator(rt.Configurator)
	}
	sak, err := serviceAccountKubeconfigDeps(mgr, opts, clk, runtimes)
	if err != nil {
		return err
	}
	var selfService kube.RuntimeClientFactory = runtimes.Controller
	if r.runtimeClients != nil {
		selfService = r.runtimeClients
	}
	rc := registryCacheDeps(mgr, garden, opts, clk, selfService)
	al, err := auditLogPoolDeps(mgr, garden, opts, clk, shoots, selfService)
	if err != nil {
		return err
	}
	if al != nil {
		// Provisioning claims tenants from the pool the audit log pool controller keeps.
		rt.AuditLog = kymaruntime.AuditLog{Pool: al.Pool, Kind: al.Kind}
	}
	for _, name := range selected {
		var err error
		switch name {
		case gardenercluster.Name:
			err = gardenercluster.AddToManager(mgr, gc)
		case kymaruntime.Name:
			// The shoot reaper runs with the Runtime controller: --controllers has one name for both.
			if err = kymaruntime.AddToManager(mgr, rt); err == nil {
				err = shootreaper.AddToManager(mgr, reaper)
			}
		case serviceaccountkubeconfig.Name:
			err = serviceaccountkubeconfig.AddToManager(mgr, sak)
		case registrycachesync.Name:
			if rc != nil {
				err = registrycachesync.AddToManager(mgr, *rc)
			}
		case auditlogpool.Name:
			if al != nil {
				err = auditlogpool.AddToManager(mgr, *al)
			}
		default:
			err = fmt.Errorf("unknown controller %q", name)
		}
		if err != nil {
			return fmt.Errorf("set up controller %s: %w", name, err)
		}
	}
	return nil
}

// gardenerClusterDeps builds the GardenerCluster controller's Deps: Gardener's kubeconfig issuer and the KCP
// Secrets it fills.
func gardenerClusterDeps(mgr manager.Manager, garden cluster.Cluster, opts Options, clk ports.Clock, shoots ports.Shoots) (gardenercluster.Deps, error) {
	// A dedicated client: the shared garden scheme does not carry AdminKubeconfigRequest. It uses the garden
	// config and so the configured QPS and burst.
	issuerClient, err := gardener.NewIssuerClient(garden.GetConfig())
	if err != nil {
		return gardenercluster.Deps{}, fmt.Errorf("kubeconfig issuer: %w", err)
	}
	policy, err := opts.kubeconfigPolicy()
	if err != nil {
		return gardenercluster.Deps{}, err
	}
	kcp, live := mgr.GetClient(), mgr.GetAPIReader()
	return gardenercluster.Deps{Clock: clk, Issuer: gardener.NewAdminKubeconfigIssuer(issuerClient, opts.GardenNamespace()),
		Secrets: kube.NewKubeconfigSecretStore(kcp, live, kcp), Shoots: shoots, Policy: policy, Workers: opts.GardenerClusterWorkers}, nil
}

// serviceAccountKubeconfigDeps builds the ServiceAccountKubeconfig controller's Deps: runtimes reached through
// their admin kubeconfig Secrets in the KCP (each call bounded by a timeout), and the KCP Secrets it fills.
func serviceAccountKubeconfigDeps(mgr manager.Manager, opts Options, clk ports.Clock, runtimes *kube.RuntimeClients) (serviceaccountkubeconfig.Deps, error) {
	policy, err := opts.kubeconfigPolicy()
	if err != nil {
		return serviceaccountkubeconfig.Deps{}, err
	}
	kcp, live := mgr.GetClient(), mgr.GetAPIReader()
	return serviceaccountkubeconfig.Deps{Clock: clk, Identities: &kube.RuntimeIdentities{KCP: live, Clients: runtimes},
		Secrets: kube.NewIdentityKubeconfigStore(kcp, live, kcp), Access: opts.identityAccess(), RotationFraction: policy.RotationFraction,
		CleanupTimeout: opts.Config.ServiceAccountKubeconfigs.CleanupTimeout.Duration, Workers: opts.ServiceAccountKubeconfigWorkers}, nil
}
