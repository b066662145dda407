// Package registrycache is the registry cache controller: per Runtime it reads the customer's RegistryCacheConfig
// objects from the runtime (periodically, and at once on a trigger), writes Runtime.spec.imageRegistryCache with
// its own field manager, keeps the garden copies of the credentials and reports a status on every object. The
// Runtime controller then puts the caches into the shoot. It runs on the shared reconcile skeleton (hooks.go) with
// the ports the composition root built (setup.RegistryCachePorts).
package registrycache

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/setup"
)

// RBAC in KCP (Runtimes are also the Runtime controller's; ConfigMaps
// kim-registry-cache-<runtimeID> record each runtime's garden copies and go when they are empty). In the garden the
// operator's Role allows creating, getting and deleting Secrets in the project namespace, never listing or
// watching them: the copies are found by the names the KCP records.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;create;patch;delete

// Name of the controller in logs and the --controllers flag.
const Name = "registry-cache"

// TriggerPath is the path of the sync trigger on the manager's metrics server:
// POST /registry-cache/sync?runtimeID=<runtimeID> (authenticated and authorized like /metrics; RBAC: post on the
// non-resource URL /registry-cache/sync, which the ClusterRole registry-cache-trigger grants).
const TriggerPath = "/registry-cache/sync"

// Controller wires the registry cache sync into the operator.
type Controller struct{}

var _ setup.Controller = Controller{}

// Name implements setup.Controller.
func (Controller) Name() string { return Name }

// SetupWithManager implements setup.Controller. Nothing is set up when registryCache.enabled is false (no ports).
func (Controller) SetupWithManager(mgr manager.Manager, deps setup.Deps) error {
	p := deps.Ports.SelfService.RegistryCache
	if p == nil {
		return nil
	}
	ns := deps.Namespaces[0]
	sync := &usecase.RegistryCacheSync{Runtimes: p.Runtimes, Source: p.Source, Garden: p.Garden, Ledger: p.Ledger,
		Resolver: p.Resolver, Interval: p.Interval}
	metrics := NewMetrics(nil)
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps.Ports, sync, metrics, mgr.GetEventRecorder("kim-"+Name))
	triggers := make(chan event.TypedGenericEvent[reconcile.Request], 64)
	if err := mgr.AddMetricsServerExtraHandler(TriggerPath, &Trigger{Runtimes: mgr.GetClient(), Namespaces: deps.Namespaces,
		Events: triggers}); err != nil {
		return fmt.Errorf("registry cache trigger endpoint: %w", err)
	}
	if p.ListenerPort > 0 {
		l := &Listener{Addr: fmt.Sprintf(":%d", p.ListenerPort), Runtimes: mgr.GetClient(), Namespaces: deps.Namespaces,
			Enqueue: LeaderOrAnnotation(mgr.Elected(), ChannelEnqueuer(triggers), AnnotationEnqueuer(mgr.GetClient())),
			Limiter: rate.NewLimiter(WatcherEventsPerSecond, WatcherEventsBurst), Coalesce: WatcherCoalesce, Metrics: metrics}
		if err := mgr.Add(l); err != nil {
			return fmt.Errorf("registry cache watcher listener: %w", err)
		}
	}
	if err := mgr.Add(&sweeper{ledger: p.Ledger, namespaces: deps.Namespaces, interval: p.Interval, events: triggers}); err != nil {
		return fmt.Errorf("registry cache sweeper: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).Named(Name).
		WatchesRawSource(source.Kind(mgr.GetCache(), &imv1.Runtime{}, runtimeEvents(p.Interval))).
		WatchesRawSource(source.Kind(deps.Garden.GetCache(), &gardencorev1beta1.Shoot{},
			shootEvents(ns, deps.Ports.ShootOwner, deps.Ports.SelfService.ObserveShoot))).
		WatchesRawSource(source.TypedChannel(triggers, &requestHandler{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(p.Workers, 1),
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Second, 10*time.Minute)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("registry cache controller: %w", err)
	}
	return nil
}
