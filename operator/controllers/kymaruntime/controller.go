// Package kymaruntime is the Runtime controller: on the shared reconcile skeleton it maps Runtimes to the provisioning
// and teardown use cases (core/usecase) and their results to status, and runs the reaper use case on the shoots of
// the garden.
package kymaruntime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/setup"
)

// RBAC in KCP. In the garden the operator's project service account needs shoots (get, list, watch, create,
// patch, update, delete), configmaps (get, list, watch, create, patch) in the project namespace and seeds (list).
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

// Controller wires the Runtime reconciler and the reaper into the operator.
type Controller struct{}

var _ setup.Controller = Controller{}

// Name implements setup.Controller.
func (Controller) Name() string { return Name }

// UseCases builds the use cases of the Runtime controller and the reaper from the ports.
func UseCases(p setup.Ports, s setup.Settings) (*usecase.Provisioner, *usecase.Teardown, *usecase.Reaper) {
	provision := &usecase.Provisioner{Shoots: p.Shoots, Seeds: p.Seeds, Access: p.Access, Configurator: p.Configurator,
		Guard: p.Guard, Config: s.Shoot, Policy: s.Deletion, Addresses: p.Addresses, Credentials: p.Credentials,
		Bootstrap: p.Bootstrap, DriftPeriod: s.DriftPeriod, AdoptOnly: s.AdoptOnly, RegistryCredentials: p.RegistryCredentials,
		Bindings: p.Bindings, Records: p.Records}
	if p.Bootstrap != nil && p.BootstrapRecords != nil && !p.BootstrapRollout.AllAtOnce() {
		// A changed set of bootstrap manifests reaches the runtimes in waves, stopped when too many fail it.
		provision.Rollout = &usecase.BootstrapRollout{Runtimes: p.BootstrapRecords, Shoots: p.ShootLister, Source: p.Bootstrap,
			Policy: p.BootstrapRollout}
	}
	if al := p.SelfService.AuditLog; al != nil {
		// Dedicated audit log tenants (auditLogAccessEnabled) are claimed while provisioning: the shoot needs one.
		provision.AuditLogs = &usecase.AuditLogClaimer{Pool: al.Pool}
	}
	teardown := &usecase.Teardown{Shoots: p.Shoots, Access: p.Access, Records: p.Records, Policy: s.Deletion, Clock: p.ServerClock,
		Configurator: p.Configurator, Bindings: p.Bindings}
	restorer := &usecase.Restorer{Shoots: p.Shoots, Runtimes: p.Registry, Policy: s.Deletion, DefaultNamespace: s.Namespaces[0]}
	reaper := &usecase.Reaper{Shoots: p.Shoots, Runtimes: p.Registry, Records: p.Records, Namespace: s.Namespaces[0], Guard: p.Guard,
		Clock: p.ServerClock, Restorer: restorer,
		Policy: s.Deletion, Bindings: p.Bindings}
	return provision, teardown, reaper
}

// SetupWithManager implements setup.Controller.
func (c Controller) SetupWithManager(mgr manager.Manager, deps setup.Deps) error {
	policy := deps.Deletion
	mgr.GetLogger().Info("deletion policy", "defaultWindow", policy.DefaultWindow.String(), "maxWindow", policy.MaxWindow.String(),
		"planWindows", fmt.Sprint(policy.PlanWindows), "forceDeletionAfter", policy.ForceDeletionAfter.String(),
		"frozen", policy.Frozen, "budget", fmt.Sprintf("%d per %s", policy.Budget.Limit, policy.Budget.Per),
		"maxClockAhead", policy.ClockTolerance().String())
	m := NewMetrics(nil)
	provision, teardown, reaper := UseCases(deps.Ports, deps.Settings)
	r, err := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps.Ports.Clock, mgr.GetEventRecorder("kim-runtime"), m, provision,
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
		WatchesRawSource(source.Kind(garden, &gardencorev1beta1.Shoot{}, shootToRuntimes(mgr.GetClient(), deps.Namespaces, deps.Ports.ShootOwner))).
		WatchesRawSource(source.Kind(garden, &corev1.ConfigMap{}, configMapToRuntime(deps.Ports.ShootOwner), configMapChanged()))
	if deps.Ports.AddressesSource != nil {
		// New control plane addresses reach every shoot whose ACL includes them, without a restart.
		toRuntimes := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
			return runtimesNeedingAddresses(ctx, mgr.GetClient(), deps.Shoot)
		})
		b = b.WatchesRawSource(source.Kind(deps.Ports.AddressesSource, &corev1.ConfigMap{}, toRuntimes))
	}
	b = watchAuditLogPool(mgr.GetCache(), mgr.GetClient(), deps.Ports.SelfService.AuditLog, b)
	b = watchBootstrap(mgr.GetClient(), deps.Ports, b)
	if provision.Rollout != nil {
		// A wave that advances enqueues exactly the Runtimes it admits; held ones are not polled.
		admitted := make(chan event.TypedGenericEvent[reconcile.Request], 1024)
		if err := mgr.Add(&rolloutTracker{rollout: provision.Rollout, clock: deps.Ports.Clock, metrics: m,
			interval: usecase.DefaultRolloutInterval, events: admitted}); err != nil {
			return fmt.Errorf("bootstrap rollout: %w", err)
		}
		b = b.WatchesRawSource(source.TypedChannel(admitted, requestEvents()))
	}
	if err := b.WithOptions(controller.Options{MaxConcurrentReconciles: deps.RuntimeWorkers}).Complete(r); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).Named(ReaperName).
		WatchesRawSource(source.Kind(garden, &gardencorev1beta1.Shoot{}, reaperEvents(), managedShoots())).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(NewReaper(deps.Garden.GetClient(), deps.Garden.GetAPIReader(), deps.Ports.Clock, m, reaper))
	if err != nil {
		return fmt.Errorf("shoot reaper: %w", err)
	}
	if err := mgr.Add(migrateRecords(deps.Garden.GetCache(), deps.Ports.ShootLister, deps.Ports.Clock, reaper)); err != nil {
		return fmt.Errorf("deletion record migration: %w", err)
	}
	fleetGauges.Use(&FleetCollector{Fleet: &usecase.Fleet{Shoots: deps.Ports.ShootLister, Guard: deps.Ports.Guard, Policy: policy},
		KCP: mgr.GetClient(), Clock: deps.Ports.Clock})
	return nil
}
