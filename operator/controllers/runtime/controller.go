// Package runtime is the Runtime controller: it maps Runtimes to the provisioning and teardown use cases
// (core/usecase) and their results to status, and runs the reaper use case on the shoots of the garden.
package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
)

// RBAC in KCP. In the garden the operator's project service account needs shoots (get, list, watch, create,
// patch, update, delete), configmaps (get, list, watch, create, patch) in the project namespace and seeds (list).
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch

// Controller wires the Runtime reconciler and the reaper into the operator (app.Controller).
type Controller struct {
	// ShootConfig drives shoot generation; DeletionPolicy the grace windows and the guard. Both empty: taken
	// from the operator configuration.
	ShootConfig    shoot.Config
	DeletionPolicy deletion.Policy
	// Clock is the time source (nil: wall clock).
	Clock ports.Clock
	// SkipNameValidation allows a second manager with this controller in the same process (tests restart the
	// operator in-process; controller-runtime refuses duplicate controller names otherwise).
	SkipNameValidation bool
}

var _ app.Controller = (*Controller)(nil)

// Name implements app.Controller.
func (c *Controller) Name() string { return "runtime" }

// SetupWithManager implements app.Controller.
func (c *Controller) SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts app.Options) error {
	// Locals, not fields: setting the controller up must not change it (a caller may set it up again with another
	// manager and configuration).
	cfg, policy := c.ShootConfig, c.DeletionPolicy
	if cfg.Project == "" && opts.Config != nil {
		cfg, policy = opts.Config.ShootConfig(), DeletionPolicy(opts.Config.Deletion)
	}
	if policy.Budget == (deletion.Budget{}) {
		policy.Budget = deletion.DefaultBudget()
	}
	if err := policy.Validate(); err != nil {
		return fmt.Errorf("runtime controller: deletion policy: %w", err)
	}
	if cfg.Project == "" {
		cfg.Project = opts.GardenerProject
	}
	var clk ports.Clock = clock.RealClock{}
	if c.Clock != nil {
		clk = c.Clock
	}
	mgr.GetLogger().Info("deletion policy", "defaultWindow", policy.DefaultWindow.String(), "maxWindow", policy.MaxWindow.String(),
		"planWindows", fmt.Sprint(policy.PlanWindows), "forceDeletionAfter", policy.ForceDeletionAfter.String(),
		"frozen", policy.Frozen, "budget", fmt.Sprintf("%d per %s", policy.Budget.Limit, policy.Budget.Per),
		"maxClockAhead", policy.ClockTolerance().String())
	m := NewMetrics(nil)
	ns := opts.WatchNamespaces[0]
	shoots := &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace(),
		RuntimeNamespace: ns, Observe: m.GardenerRequest}
	guard := &kube.DeletionGuard{Cached: mgr.GetClient(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: ns}
	serverClock, err := kube.NewServerClock(garden.GetConfig())
	if err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	registry := &kube.RuntimeRegistry{Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespaces: opts.WatchNamespaces}
	r := &Reconciler{
		Client: mgr.GetClient(), LiveReader: mgr.GetAPIReader(), Clock: clk, Metrics: m,
		Recorder: mgr.GetEventRecorder("kim-runtime"),
		Provision: &usecase.Provisioner{Shoots: shoots, Seeds: shoots, Access: &kube.AccessObjects{Client: mgr.GetClient()},
			Guard: guard, Config: cfg, Policy: policy, Credentials: shoots},
		Teardown: &usecase.Teardown{Shoots: shoots, Access: &kube.AccessObjects{Client: mgr.GetClient()}, Policy: policy, Clock: serverClock},
	}
	configureRuntimes(mgr, opts.Config, ns, r.Provision, r.Teardown)
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
	b := ctrl.NewControllerManagedBy(mgr).Named("runtime").
		// Labels too: the plan label decides the deletion window the shoot records.
		For(&imv1.Runtime{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&imv1.GardenerCluster{}).
		Watches(&corev1.Secret{}, secretToRuntime).
		WatchesRawSource(source.Kind(garden.GetCache(), &gardencorev1beta1.Shoot{}, shootToRuntimes(mgr.GetClient(), opts.WatchNamespaces))).
		WatchesRawSource(source.Kind(garden.GetCache(), &corev1.ConfigMap{}, configMapToRuntime(), configMapChanged()))
	if b, err = c.watchControlPlaneAddresses(mgr, opts.Config, ns, r.Provision, b); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	if b, err = watchBootstrap(mgr, opts.Config, ns, r.Provision, b); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	err = b.WithOptions(controller.Options{MaxConcurrentReconciles: opts.RuntimeWorkers, SkipNameValidation: &c.SkipNameValidation}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	restorer := &usecase.Restorer{Shoots: shoots, Runtimes: registry, Policy: policy, DefaultNamespace: ns}
	reaper := &Reaper{Clock: clk, Metrics: m, Reap: &usecase.Reaper{Shoots: shoots, Runtimes: registry, Guard: guard,
		Clock: serverClock, Restorer: restorer, Policy: policy}}
	err = ctrl.NewControllerManagedBy(mgr).Named("shoot-reaper").
		WatchesRawSource(source.Kind(garden.GetCache(), &gardencorev1beta1.Shoot{}, &handler.TypedEnqueueRequestForObject[*gardencorev1beta1.Shoot]{},
			predicate.NewTypedPredicateFuncs(func(s *gardencorev1beta1.Shoot) bool {
				return s.Labels[gardener.LabelManagedBy] == gardener.ManagedByValue
			}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: &c.SkipNameValidation}).
		Complete(reaper)
	if err != nil {
		return fmt.Errorf("shoot reaper: %w", err)
	}
	fleetGauges.use(&FleetCollector{Garden: garden.GetClient(), Namespace: opts.GardenNamespace(), KCP: mgr.GetClient(),
		Guard: guard, Policy: policy, Clock: clk})
	return nil
}
