// Package kymaruntime is the Runtime controller: on the shared reconcile skeleton it maps Runtimes to the provisioning
// and teardown use cases (core/usecase) and their results to status, and runs the reaper use case on the shoots of
// the garden.
package kymaruntime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RBAC in KCP. In the garden the operator's project service account needs shoots (get, list, watch, create,
// patch, update, delete), configmaps (get, list, watch, create, patch) in the project namespace, seeds (list) and cloudprofiles (get).
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/status,verbs=get;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;create;delete
// The operator's own records of deletions (the reaper deletes no shoot without one); only the operator writes them.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=deletionrecords,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch
// The KCP ConfigMap with the control plane's egress addresses (shoot.acl.configMap) is read and watched.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch

// Name of the Runtime controller in logs and the --controllers flag; the reaper is named ReaperName.
const (
	Name       = "runtime"
	ReaperName = "shoot-reaper"
)

// fleetGaugesReuse: the fleet gauges feed alerts that wait minutes; a third of Prometheus's usual 30 s scrape
// interval keeps one scraper's samples fresh and lets closer scrapers share a walk.
const fleetGaugesReuse = 10 * time.Second

// Deps is what the Runtime controller and the shoot reaper are built from; the composition root (operator/app)
// fills it.
type Deps struct {
	// Garden is the Gardener project's cluster: shoots and the operator's ConfigMaps are watched in its cache, the
	// reaper reads shoots through its clients.
	Garden cluster.Cluster
	// Namespaces are the watched KCP namespaces; the first is the operator's own (the deletion guard, restored
	// Runtimes without a recorded namespace).
	Namespaces []string
	Clock      ports.Clock
	// ServerClock is the garden's clock: deletion windows are measured on it.
	ServerClock ports.ServerClock
	Shoots      ports.Shoots
	ShootLister ports.ShootLister
	Seeds       ports.Seeds
	// Profiles gives the zones a cloud profile offers in a region, for worker pools that come without zones; nil:
	// such pools are refused.
	Profiles     ports.CloudProfiles
	Credentials  ports.CredentialsMigrator
	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	Guard        ports.DeletionGuard
	// Records are the KCP's own records of deletions (DeletionRecord objects).
	Records ports.DeletionRecords
	// Bindings labels the credentials bindings of deleted runtimes as KEB's deprovisioning expects; nil: never.
	Bindings ports.CredentialsBindings
	// Registry re-creates Runtimes the reaper restores.
	Registry ports.RuntimeRegistry
	// RegistryCredentials confirms the copies of registry credentials Runtimes reference (any other reference is
	// refused); nil: every reference is refused.
	RegistryCredentials ports.RegistryCredentialOwners
	// Addresses are the control plane's egress CIDRs and AddressesSource the cache holding their ConfigMap (watched
	// so new addresses reach every affected shoot); both nil when shoot.acl.configMap is not configured.
	Addresses       ports.ControlPlaneAddresses
	AddressesSource cache.Cache
	// Bootstrap reads the landscape's bootstrap manifests and pull secret (runtime.bootstrap); nil when none are
	// configured. BootstrapSource is the cache holding them (watched so changed manifests reach every runtime
	// without waiting for its drift period); nil with Bootstrap. BootstrapPullSecret: it holds a pull Secret too.
	Bootstrap           ports.BootstrapSource
	BootstrapSource     cache.Cache
	BootstrapPullSecret bool
	// BootstrapRecords lists what the Runtimes record of the bootstrap manifests (from the manager's cache), for
	// BootstrapRollout (runtime.bootstrap.rollout): a changed set reaches the runtimes in waves. Nil, or a share of
	// 1: every runtime at once.
	BootstrapRecords ports.RuntimeBootstrapLister
	BootstrapRollout runtimeconfig.RolloutPolicy
	// AuditLogPool hands out dedicated audit log tenants while provisioning; AuditLogKind is its resource (watched:
	// a freed tenant wakes the Runtimes waiting for one). Nil when shoot.auditLog.pool.enabled is false.
	AuditLogPool ports.AuditLogPool
	AuditLogKind schema.GroupVersionKind
	// Shoot is the landscape's shoot configuration, Deletion the deletion policy.
	Shoot    shoot.Config
	Deletion deletion.Policy
	// DriftPeriod is how long a configuration reached inside a runtime is trusted before it is written again
	// (runtime.driftPeriod; 0: lifecycle.DefaultDriftPeriod).
	DriftPeriod time.Duration
	// AdoptOnly holds changes to shoots adopted from the previous system until approved (runtime.adoptOnly).
	AdoptOnly bool
	// StatusProgressInterval is how often at most Gardener's progress alone is written into a Runtime's status
	// (runtime.statusProgressInterval; 0: every change).
	StatusProgressInterval time.Duration
	// Workers are the concurrent reconciles of the Runtime controller (--runtime-workers).
	Workers int
	// ShootUpdates tells which shoot updates change what the Runtime controller and the reaper read; nil: every
	// update does.
	ShootUpdates ShootUpdates
}

// useCases builds the use cases of the Runtime controller and the reaper from deps.
func useCases(d Deps) (*usecase.Provisioner, *usecase.Teardown, *usecase.Reaper) {
	provision := &usecase.Provisioner{Shoots: d.Shoots, Seeds: d.Seeds, Profiles: d.Profiles, Access: d.Access, Configurator: d.Configurator,
		Guard: d.Guard, Config: d.Shoot, Policy: d.Deletion, Addresses: d.Addresses, Credentials: d.Credentials,
		Bootstrap: d.Bootstrap, DriftPeriod: d.DriftPeriod, AdoptOnly: d.AdoptOnly, RegistryCredentials: d.RegistryCredentials,
		Bindings: d.Bindings, Records: d.Records, Clock: d.ServerClock}
	if d.Bootstrap != nil && d.BootstrapRecords != nil && !d.BootstrapRollout.AllAtOnce() {
		// A changed set of bootstrap manifests reaches the runtimes in waves, stopped when too many fail it.
		provision.Rollout = &usecase.BootstrapRollout{Runtimes: d.BootstrapRecords, Shoots: d.ShootLister, Source: d.Bootstrap,
			Policy: d.BootstrapRollout}
	}
	if d.AuditLogPool != nil {
		// Dedicated audit log tenants (auditLogAccessEnabled) are claimed while provisioning: the shoot needs one.
		provision.AuditLogs = &usecase.AuditLogClaimer{Pool: d.AuditLogPool}
	}
	teardown := &usecase.Teardown{Shoots: d.Shoots, Access: d.Access, Records: d.Records, Policy: d.Deletion, Clock: d.ServerClock,
		Configurator: d.Configurator, Bindings: d.Bindings}
	restorer := &usecase.Restorer{Shoots: d.Shoots, Runtimes: d.Registry, Policy: d.Deletion, DefaultNamespace: d.Namespaces[0]}
	reaper := &usecase.Reaper{Shoots: d.Shoots, Runtimes: d.Registry, Records: d.Records, Namespace: d.Namespaces[0], Guard: d.Guard,
		Clock: d.ServerClock, Restorer: restorer,
		Policy: d.Deletion, Bindings: d.Bindings}
	return provision, teardown, reaper
}

// AddToManager registers the Runtime controller, the shoot reaper, the one-time deletion record migration and the
// fleet gauges with the KCP manager.
func AddToManager(mgr manager.Manager, deps Deps) error {
	policy := deps.Deletion
	mgr.GetLogger().Info("deletion policy", "defaultWindow", policy.DefaultWindow.String(), "maxWindow", policy.MaxWindow.String(),
		"planWindows", fmt.Sprint(policy.PlanWindows), "forceDeletionAfter", policy.ForceDeletionAfter.String(),
		"frozen", policy.Frozen, "budget", fmt.Sprintf("%d per %s", policy.Budget.Limit, policy.Budget.Per),
		"maxClockAhead", policy.ClockTolerance().String())
	m := NewMetrics(nil)
	provision, teardown, reaper := useCases(deps)
	r, err := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps.Clock, mgr.GetEventRecorder("kim-runtime"), m, provision,
		teardown, deps.StatusProgressInterval)
	if err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	if err := indexRuntimesByShootName(context.Background(), mgr); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	secretToRuntime := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		id := o.GetLabels()[imv1.LabelRuntimeID]
		if id == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: id}}}
	})
	garden := deps.Garden.GetCache()
	b := ctrl.NewControllerManagedBy(mgr).Named(Name).
		// Labels too: the plan label decides the deletion window the shoot records.
		For(&imv1.Runtime{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&imv1.GardenerCluster{}).
		Watches(&corev1.Secret{}, secretToRuntime).
		WatchesRawSource(source.Kind(garden, &gardencorev1beta1.Shoot{},
			shootEvents(mgr.GetClient(), deps.Namespaces, deps.ShootUpdates, deps.StatusProgressInterval))).
		WatchesRawSource(source.Kind(garden, &corev1.ConfigMap{}, configMapToRuntime(), configMapChanged()))
	if deps.AddressesSource != nil {
		// New control plane addresses reach every shoot whose ACL includes them, without a restart.
		toRuntimes := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
			return runtimesNeedingAddresses(ctx, mgr.GetClient(), deps.Shoot)
		})
		b = b.WatchesRawSource(source.Kind(deps.AddressesSource, &corev1.ConfigMap{}, toRuntimes))
	}
	b = watchAuditLogPool(mgr.GetCache(), mgr.GetClient(), deps, b)
	b = watchBootstrap(mgr.GetClient(), deps, b)
	if provision.Rollout != nil {
		// A wave that advances enqueues exactly the Runtimes it admits; held ones are not polled.
		admitted := make(chan event.TypedGenericEvent[reconcile.Request], 1024)
		if err := mgr.Add(&rolloutTracker{rollout: provision.Rollout, clock: deps.Clock, metrics: m,
			interval: usecase.DefaultRolloutInterval, events: admitted}); err != nil {
			return fmt.Errorf("bootstrap rollout: %w", err)
		}
		b = b.WatchesRawSource(source.TypedChannel(admitted, requestEvents()))
	}
	if err := b.WithOptions(controller.Options{MaxConcurrentReconciles: deps.Workers}).Complete(r); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).Named(ReaperName).
		WatchesRawSource(source.Kind(garden, &gardencorev1beta1.Shoot{}, reaperEvents(), managedShoots(), shootChanged(deps.ShootUpdates))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(NewReaper(deps.Garden.GetClient(), deps.Garden.GetAPIReader(), deps.Clock, m, reaper))
	if err != nil {
		return fmt.Errorf("shoot reaper: %w", err)
	}
	if err := mgr.Add(migrateRecords(deps.Garden.GetCache(), deps.ShootLister, deps.Clock, reaper)); err != nil {
		return fmt.Errorf("deletion record migration: %w", err)
	}
	fleetGauges.Use(&FleetCollector{Fleet: &usecase.Fleet{Shoots: deps.ShootLister, Guard: deps.Guard, Policy: policy},
		KCP: mgr.GetClient(), Clock: deps.Clock, Reuse: fleetGaugesReuse})
	return nil
}
