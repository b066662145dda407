// Package runtime is the Runtime controller: it provisions, updates and reports Runtimes (core/domain/lifecycle),
// deletes them safely (core/domain/deletion) and reaps shoots whose deletion window has passed.
package runtime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
)

// RBAC in KCP. In the garden the operator's project service account needs shoots (get, list, watch, create,
// patch, update, delete), configmaps (get, patch, create) in the project namespace and seeds (list).
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=events,verbs=create;patch

// Controller wires the Runtime reconciler and the reaper into the operator (app.Controller).
type Controller struct {
	// ShootConfig drives shoot generation; DeletionPolicy the grace windows and the brake.
	ShootConfig    shoot.Config
	DeletionPolicy deletion.Policy
	// Clock is the time source (nil: wall clock).
	Clock interface{ Now() time.Time }
	// SkipNameValidation allows a second manager with this controller in the same process (tests restart the
	// operator in-process; controller-runtime refuses duplicate controller names otherwise).
	SkipNameValidation bool
}

var _ app.Controller = (*Controller)(nil)

// Name implements app.Controller.
func (c *Controller) Name() string { return "runtime" }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// SetupWithManager implements app.Controller.
func (c *Controller) SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts app.Options) error {
	// Locals, not fields: setting the controller up must not change it (a caller may set it up again with another
	// manager and configuration).
	cfg, policy := c.ShootConfig, c.DeletionPolicy
	if cfg.Project == "" && opts.Config != nil {
		cfg, policy = opts.Config.ShootConfig(), DeletionPolicy(opts.Config.Deletion)
	}
	if err := policy.Validate(); err != nil {
		return fmt.Errorf("runtime controller: deletion policy: %w", err)
	}
	clock := c.Clock
	if clock == nil {
		clock = wallClock{}
	}
	m := NewMetrics(nil)
	ns := opts.WatchNamespaces[0]
	shoots := &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace(),
		RuntimeNamespace: ns, Observe: m.GardenerRequest}
	if cfg.Project == "" {
		cfg.Project = opts.GardenerProject
	}
	r := &Reconciler{
		Client: mgr.GetClient(), Shoots: shoots, Seeds: shoots,
		Access:       &kube.AccessObjects{Client: mgr.GetClient()},
		Configurator: &kube.RuntimeConfigurator{KCP: mgr.GetAPIReader(), Namespace: ns},
		Clock:        clock, ShootConfig: cfg, Policy: policy,
		Recorder: mgr.GetEventRecorderFor("runtime-controller"), Metrics: m, //nolint:staticcheck // core/v1 events; moving to events.k8s.io needs new RBAC and call sites
		Credentials: shoots,
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
	b := ctrl.NewControllerManagedBy(mgr).Named("runtime").
		For(&imv1.Runtime{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&imv1.GardenerCluster{}).
		Watches(&corev1.Secret{}, secretToRuntime).
		WatchesRawSource(source.Kind(garden.GetCache(), &gardencorev1beta1.Shoot{}, shootToRuntimes(mgr.GetClient(), opts.WatchNamespaces))).
		WatchesRawSource(source.Kind(garden.GetCache(), &corev1.ConfigMap{}, configMapToRuntime(), configMapChanged()))
	b, err := c.watchControlPlaneAddresses(mgr, opts.Config, ns, r, b)
	if err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	err = b.WithOptions(controller.Options{MaxConcurrentReconciles: opts.RuntimeWorkers, SkipNameValidation: &c.SkipNameValidation}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	reaper := &Reaper{Garden: garden.GetClient(), Namespace: opts.GardenNamespace(), Shoots: shoots, KCP: mgr.GetClient(),
		Clock: clock, Policy: policy, Metrics: m}
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
	return nil
}
