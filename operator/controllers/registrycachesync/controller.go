// Package registrycachesync is the registry cache controller: per Runtime it reads the customer's RegistryCacheConfig
// objects from the runtime (periodically, and at once on a trigger), writes Runtime.spec.imageRegistryCache with
// its own field manager, keeps the garden copies of the credentials and reports a status on every object. The
// Runtime controller then puts the caches into the shoot. It runs on the shared reconcile skeleton (hooks.go) with
// the ports the composition root built (Deps).
package registrycachesync

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
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

// Deps is what the registry cache controller syncs with; the composition root (operator/app) fills it, and sets the
// controller up only when registryCache.enabled is not false.
type Deps struct {
	// GardenCache is the garden's cache: events of shoots with caches enqueue their Runtime; Observe reads the
	// operator's marks and Gardener's reconcile state off those shoots.
	GardenCache cache.Cache
	Observe     ShootObserver
	// Namespaces are the watched KCP namespaces; the first is the operator's own.
	Namespaces []string
	Clock      ports.Clock
	Runtimes   ports.RegistryCacheRuntimes
	// Source reads RegistryCacheConfig objects in runtimes. This is where the per-runtime client is made; the
	// composition root decides how (see operator/app).
	Source ports.RegistryCacheSource
	Garden ports.RegistryCacheGarden
	// Ledger records each runtime's garden copies in the KCP (the operator never lists the project's Secrets).
	Ledger ports.RegistryCacheLedger
	// Resolver checks upstream host names; nil when registryCache.checkUpstreamDNS is false.
	Resolver ports.UpstreamResolver
	// Interval is the periodic sync of every runtime; Workers the runtimes synced at the same time.
	Interval time.Duration
	Workers  int
	// ListenerPort is the port of the Runtime Watcher's event listener; 0: none.
	ListenerPort int
	// ListenerTrust says which X-Forwarded-Client-Cert element the listener believes.
	ListenerTrust Trust
}

// NewListener is the Runtime Watcher's listener as the operator runs it: on ListenerPort, believing ListenerTrust,
// reading Runtimes from runtimes (the manager's cache) and queueing syncs on the controller's trigger channel, with
// the shipped bounds. It runs on the leader only (NeedLeaderElection).
func NewListener(deps Deps, runtimes client.Reader, triggers chan<- event.TypedGenericEvent[reconcile.Request], metrics *Metrics) *Listener {
	return &Listener{Addr: fmt.Sprintf(":%d", deps.ListenerPort), Trust: deps.ListenerTrust, Runtimes: runtimes,
		Namespaces: deps.Namespaces, Enqueue: ChannelEnqueuer(triggers),
		SourceLimiter: NewKeyedLimiter(WatcherSourceRate, WatcherSourceBurst, WatcherSourceKeys),
		Limiter:       rate.NewLimiter(WatcherEventsPerSecond, WatcherEventsBurst), Coalesce: WatcherCoalesce, Metrics: metrics}
}

// ShootObserver is the port that reads the domain's observation of a shoot (the operator's marks, Gardener's
// reconcile state) off the object of a garden event; the Gardener adapter implements it.
type ShootObserver interface {
	Observe(*gardencorev1beta1.Shoot) shootstate.Shoot
}

// AddToManager registers the registry cache sync with the KCP manager: the controller, its trigger endpoint, the
// Runtime Watcher's listener (ListenerPort) and the sweeper of the ledger.
func AddToManager(mgr manager.Manager, deps Deps) error {
	ns := deps.Namespaces[0]
	sync := &usecase.RegistryCacheSync{Runtimes: deps.Runtimes, Source: deps.Source, Garden: deps.Garden, Ledger: deps.Ledger,
		Resolver: deps.Resolver, Interval: deps.Interval}
	metrics := NewMetrics(nil)
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps.Clock, sync, metrics, mgr.GetEventRecorder("kim-"+Name))
	triggers := make(chan event.TypedGenericEvent[reconcile.Request], 64)
	if err := mgr.AddMetricsServerExtraHandler(TriggerPath, &Trigger{Runtimes: mgr.GetClient(), Namespaces: deps.Namespaces,
		Events: triggers}); err != nil {
		return fmt.Errorf("registry cache trigger endpoint: %w", err)
	}
	if deps.ListenerPort > 0 {
		if err := mgr.Add(NewListener(deps, mgr.GetClient(), triggers, metrics)); err != nil {
			return fmt.Errorf("registry cache watcher listener: %w", err)
		}
	}
	if err := mgr.Add(&sweeper{ledger: deps.Ledger, namespaces: deps.Namespaces, interval: deps.Interval, events: triggers}); err != nil {
		return fmt.Errorf("registry cache sweeper: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).Named(Name).
		WatchesRawSource(source.Kind(mgr.GetCache(), &imv1.Runtime{}, runtimeEvents(deps.Interval))).
		WatchesRawSource(source.Kind(deps.GardenCache, &gardencorev1beta1.Shoot{}, shootEvents(ns, deps.Observe))).
		WatchesRawSource(source.TypedChannel(triggers, &requestHandler{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(deps.Workers, 1),
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Second, 10*time.Minute)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("registry cache controller: %w", err)
	}
	return nil
}
