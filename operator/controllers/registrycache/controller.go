// Package registrycache is the registry cache controller: per Runtime it reads the customer's RegistryCacheConfig
// objects from the runtime (periodically, and at once on a trigger), writes Runtime.spec.imageRegistryCache with
// its own field manager, keeps the garden copies of the credentials and reports a status on every object. The
// Runtime controller then puts the caches into the shoot.
package registrycache

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/adapters/dns"
	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
)

// RBAC in KCP (Runtimes are also the Runtime controller's; Kyma resources are read only). In the garden the
// operator's Role allows creating, listing (by label) and deleting Secrets in the project namespace.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operator.kyma-project.io,namespace=kcp-system,resources=kymas,verbs=get;list;watch

// TriggerPath is the path of the sync trigger on the manager's metrics server:
// POST /registry-cache/sync?runtimeID=<runtimeID> (authenticated and authorized like /metrics; RBAC: post on the
// non-resource URL /registry-cache/sync, which the ClusterRole registry-cache-trigger grants).
const TriggerPath = "/registry-cache/sync"

// Controller wires the registry cache sync into the operator (app.Controller).
type Controller struct {
	// Clock is the time source (nil: wall clock).
	Clock ports.Clock
	// Resolver checks upstream host names (nil: the system resolver, when the configuration asks for the check).
	Resolver ports.UpstreamResolver
	// RuntimeClients makes clients of runtimes (nil: from their kubeconfig Secrets). This is where a shared cache
	// of runtime clients plugs in.
	RuntimeClients kube.RuntimeClientFactory
	// SkipNameValidation allows a second manager with this controller in the same process.
	SkipNameValidation bool
}

var _ app.Controller = (*Controller)(nil)

// Name implements app.Controller.
func (c *Controller) Name() string { return "registry-cache" }

// SetupWithManager implements app.Controller. Nothing is set up when registryCache.enabled is false.
func (c *Controller) SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts app.Options) error {
	cfg := opts.Config.RegistryCache
	if cfg.Enabled != nil && !*cfg.Enabled {
		return nil
	}
	interval := cfg.SyncInterval.Duration
	ns := opts.WatchNamespaces[0]
	clients := c.RuntimeClients
	if clients == nil {
		clients = kube.NewRuntimeClientFactory(mgr.GetAPIReader(), ns, nil)
	}
	resolver := c.Resolver
	if resolver == nil && (cfg.CheckUpstreamDNS == nil || *cfg.CheckUpstreamDNS) {
		resolver = dns.Resolver{}
	}
	var clk ports.Clock = clock.RealClock{}
	if c.Clock != nil {
		clk = c.Clock
	}
	gardenAdapter := &gardener.RegistryCacheGarden{Cached: garden.GetClient(), Live: garden.GetAPIReader(), Writer: garden.GetClient(),
		Namespace: opts.GardenNamespace()}
	r := &Reconciler{Clock: clk, Recorder: runtimeRecorder{mgr.GetEventRecorder("kim-registry-cache")}, Metrics: NewMetrics(nil), Interval: interval,
		Sync: &usecase.RegistryCacheSync{Runtimes: &kube.RegistryCacheRuntimes{Client: mgr.GetClient(), Kymas: mgr.GetAPIReader()},
			Source: &kube.RegistryCacheSource{Clients: clients}, Garden: gardenAdapter, Resolver: resolver, Interval: interval}}
	triggers := make(chan event.TypedGenericEvent[reconcile.Request], 64)
	if err := mgr.AddMetricsServerExtraHandler(TriggerPath, &Trigger{Runtimes: mgr.GetClient(), Namespaces: opts.WatchNamespaces,
		Events: triggers}); err != nil {
		return fmt.Errorf("registry cache trigger endpoint: %w", err)
	}
	if err := mgr.Add(&sweeper{garden: garden.GetAPIReader(), namespace: opts.GardenNamespace(), runtimeNamespace: ns,
		interval: interval, events: triggers}); err != nil {
		return fmt.Errorf("registry cache sweeper: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).Named("registry-cache").
		WatchesRawSource(source.Kind(mgr.GetCache(), &imv1.Runtime{}, runtimeEvents(interval))).
		WatchesRawSource(source.Kind(garden.GetCache(), &gardencorev1beta1.Shoot{}, shootEvents(ns))).
		WatchesRawSource(source.TypedChannel(triggers, &requestHandler{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers, SkipNameValidation: &c.SkipNameValidation,
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Second, 10*time.Minute)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("registry cache controller: %w", err)
	}
	return nil
}

// Reconciler syncs one runtime's registry caches.
type Reconciler struct {
	Sync     *usecase.RegistryCacheSync
	Clock    ports.Clock
	Recorder eventRecorder
	Metrics  *Metrics
	// Interval is the periodic sync; requeues are spread around it so runtimes do not sync in lockstep.
	Interval time.Duration
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("runtimeID", req.Name))
	ref := ports.RuntimeRef{Namespace: req.Namespace, RuntimeID: req.Name}
	res, err := r.Sync.Sync(ctx, ref, r.Clock.Now())
	r.Metrics.Observe(res)
	for _, e := range res.Events {
		r.Recorder.Record(ctx, req.NamespacedName, e)
	}
	log := ctrl.LoggerFrom(ctx)
	if err != nil {
		log.Info("registry cache sync failed", "outcome", res.Outcome, "error", err.Error())
		return ctrl.Result{}, fmt.Errorf("registry cache sync of runtime %s: %w", req.Name, err)
	}
	log.V(1).Info("registry cache sync", "outcome", res.Outcome, "caches", res.Caches, "refused", res.Refused,
		"secretsCreated", res.SecretsCreated, "secretsDeleted", res.SecretsDeleted)
	if res.RequeueAfter == 0 {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: jitter(req.Name, res.RequeueAfter)}, nil
}
