// Package shootreaper is the shoot reaper: on the shared reconcile skeleton it runs the reaper use case
// (core/usecase) on the shoots of the garden, deleting the clusters of deleted Runtimes once their window has
// passed, restoring those asked back and keeping every other one. It also runs the one-time migration of the
// garden's deletion records into the KCP and serves the fleet gauges of safe deletion, both built on the same ports.
// The Runtime controller (kymaruntime) marks shoots for deletion; this package is the only one that deletes them.
package shootreaper

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// RBAC in KCP: the reaper reads and removes the operator's records of deletions and re-creates the Runtimes it
// restores. In the garden it uses the project service account's shoot permissions (listed with the Runtime
// controller's RBAC in kymaruntime).
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=deletionrecords,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;create

// Name of the shoot reaper in logs and in the controller-runtime metrics. The --controllers flag has no name of
// its own for it: it runs with the Runtime controller (kymaruntime.Name), whose Runtimes it deletes the shoots of.
const Name = "shoot-reaper"

// fleetGaugesReuse: the fleet gauges feed alerts that wait minutes; a third of Prometheus's usual 30 s scrape
// interval keeps one scraper's samples fresh and lets closer scrapers share a walk.
const fleetGaugesReuse = 10 * time.Second

// Deps is what the shoot reaper, the deletion record migration and the fleet gauges are built from; the
// composition root (operator/app) fills it.
type Deps struct {
	// Garden is the Gardener project's cluster: the reaper watches the shoots in its cache and reads them through
	// its clients; the migration waits for its cache.
	Garden cluster.Cluster
	// Namespace is the operator's own KCP namespace: the Runtimes of deletion records that name no namespace (older
	// operator versions) are restored and recorded there.
	Namespace string
	Clock     ports.Clock
	// ServerClock is the garden's clock: deletion windows are measured on it.
	ServerClock ports.ServerClock
	Shoots      ports.Shoots
	// ShootLister walks the cached shoots (the migration, the fleet gauges).
	ShootLister ports.ShootLister
	Guard       ports.DeletionGuard
	// Records are the KCP's own records of deletions (DeletionRecord objects): no shoot is deleted without one.
	Records ports.DeletionRecords
	// Bindings labels the credentials bindings of deleted runtimes as KEB's deprovisioning expects; nil: never.
	Bindings ports.CredentialsBindings
	// Registry re-creates the Runtimes the reaper restores.
	Registry ports.RuntimeRegistry
	// Deletion is the deletion policy (windows, the brake, the circuit breaker's budget).
	Deletion deletion.Policy
	// ShootUpdates tells which shoot updates change what the reaper reads; nil: every update does.
	ShootUpdates ShootUpdates
}

// reaper builds the reaper use case from deps.
func reaper(d Deps) *usecase.Reaper {
	restorer := &usecase.Restorer{Shoots: d.Shoots, Runtimes: d.Registry, Policy: d.Deletion, DefaultNamespace: d.Namespace}
	return &usecase.Reaper{Shoots: d.Shoots, Runtimes: d.Registry, Records: d.Records, Namespace: d.Namespace, Guard: d.Guard,
		Clock: d.ServerClock, Restorer: restorer, Policy: d.Deletion, Bindings: d.Bindings}
}

// AddToManager registers the shoot reaper with the KCP manager, with the one-time deletion record migration and the
// fleet gauges of safe deletion beside it (a runnable and a collector, no controllers).
func AddToManager(mgr manager.Manager, deps Deps) error {
	policy := deps.Deletion
	mgr.GetLogger().Info("deletion policy", "defaultWindow", policy.DefaultWindow.String(), "maxWindow", policy.MaxWindow.String(),
		"planWindows", fmt.Sprint(policy.PlanWindows), "forceDeletionAfter", policy.ForceDeletionAfter.String(),
		"frozen", policy.Frozen, "budget", fmt.Sprintf("%d per %s", policy.Budget.Limit, policy.Budget.Per),
		"maxClockAhead", policy.ClockTolerance().String())
	reap := reaper(deps)
	err := ctrl.NewControllerManagedBy(mgr).Named(Name).
		WatchesRawSource(source.Kind(deps.Garden.GetCache(), &gardencorev1beta1.Shoot{}, reaperEvents(), managedShoots(),
			shootChanged(deps.ShootUpdates))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(NewReaper(deps.Garden.GetClient(), deps.Garden.GetAPIReader(), deps.Clock, NewMetrics(nil), reap))
	if err != nil {
		return fmt.Errorf("shoot reaper: %w", err)
	}
	if err := mgr.Add(migrateRecords(deps.Garden.GetCache(), deps.ShootLister, deps.Clock, reap)); err != nil {
		return fmt.Errorf("deletion record migration: %w", err)
	}
	fleetGauges.Use(&FleetCollector{Fleet: &usecase.Fleet{Shoots: deps.ShootLister, Guard: deps.Guard, Policy: policy},
		KCP: mgr.GetClient(), Clock: deps.Clock, Reuse: fleetGaugesReuse})
	return nil
}
