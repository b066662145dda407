// Package kymaruntime is the Runtime controller: on the shared reconcile skeleton it maps Runtimes to the provisioning
// and teardown use cases (core/usecase) and their results to status. The teardown marks a shoot for deletion; the
// shoot reaper (operator/controllers/shootreaper) deletes it once its window has passed.
package kymaruntime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
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

// Name of the Runtime controller in logs and the --controllers flag. The shoot reaper (shootreaper.Name) is set up
// under this name too.
const Name = "runtime"

// Deps is what the Runtime controller is built from; the composition root (operator/app) fills it. The fields are
// grouped by what they are for; the optional features (AuditLog, Addresses, Bootstrap) are off while their ports
// are nil.
type Deps struct {
	// What the controller watches and how much at once.

	// Garden is the Gardener project's cluster: shoots and the operator's ConfigMaps are watched in its cache.
	Garden cluster.Cluster
	// Namespaces are the watched KCP namespaces; the first is the operator's own (the deletion guard).
	Namespaces []string
	// ShootUpdates tells which shoot updates change what the controller reads; nil: every update does.
	ShootUpdates ShootUpdates
	// StatusProgressInterval is how often at most Gardener's progress alone is written into a Runtime's status
	// (runtime.statusProgressInterval; 0: every change).
	StatusProgressInterval time.Duration
	// Workers are the concurrent reconciles of the Runtime controller (--runtime-workers).
	Workers int
	// MaxRetryDelay caps the backoff of a Runtime whose pass failed (runtime.maxRetryDelay; 0: controller-runtime's
	// default cap of 1000s).
	MaxRetryDelay time.Duration

	// Clocks: Clock is the operator's, ServerClock the garden's (deletion windows are measured on it).
	Clock       ports.Clock
	ServerClock ports.ServerClock

	// The shoot: what it is made from and what provisioning reads and writes in the garden.

	// Shoot is the landscape's shoot configuration.
	Shoot       shoot.Config
	Shoots      ports.Shoots
	ShootLister ports.ShootLister
	Seeds       ports.Seeds
	// Profiles gives the zones a cloud profile offers in a region, for worker pools that come without zones; nil:
	// such pools are refused.
	Profiles    ports.CloudProfiles
	Credentials ports.CredentialsMigrator
	// RegistryCredentials confirms the copies of registry credentials Runtimes reference (any other reference is
	// refused); nil: every reference is refused.
	RegistryCredentials ports.RegistryCredentialOwners
	// AdoptOnly holds changes to shoots adopted from the previous system until approved (runtime.adoptOnly).
	AdoptOnly bool

	// Inside the runtime: access (the admin kubeconfig's GardenerCluster) and the configuration reached in it.

	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	// DriftPeriod is how long a configuration reached inside a runtime is trusted before it is written again
	// (runtime.driftPeriod; 0: lifecycle.DefaultDriftPeriod).
	DriftPeriod time.Duration

	// Deletion: the teardown marks shoots for the shoot reaper (shootreaper), which deletes them.

	// Deletion is the deletion policy.
	Deletion deletion.Policy
	Guard    ports.DeletionGuard
	// Records are the KCP's own records of deletions (DeletionRecord objects).
	Records ports.DeletionRecords
	// Bindings labels the credentials bindings of deleted runtimes as KEB's deprovisioning expects; nil: never.
	Bindings ports.CredentialsBindings

	// Optional features.

	AuditLog  AuditLog
	Addresses Addresses
	Bootstrap Bootstrap
}

// AuditLog is the pool of dedicated audit log tenants, claimed while provisioning (auditLogAccessEnabled); Pool nil
// when shoot.auditLog.pool.enabled is false.
type AuditLog struct {
	Pool ports.AuditLogPool
	// Kind is the pool's resource, watched: a freed tenant wakes the Runtimes waiting for one.
	Kind schema.GroupVersionKind
}

// Addresses are the control plane's egress CIDRs (shoot.acl.configMap) and Cache the cache holding their ConfigMap,
// watched so new addresses reach every affected shoot; both nil when shoot.acl.configMap is not configured.
type Addresses struct {
	Addresses ports.ControlPlaneAddresses
	Cache     cache.Cache
}

// Bootstrap are the landscape's bootstrap manifests and pull secret (runtime.bootstrap); Source nil when none are
// configured.
type Bootstrap struct {
	Source ports.BootstrapSource
	// Cache holds them, watched so changed manifests reach every runtime without waiting for its drift period; nil
	// with Source. PullSecret: it holds a pull Secret too.
	Cache      cache.Cache
	PullSecret bool
	// Records lists what the Runtimes record of the bootstrap manifests (from the manager's cache), for Rollout
	// (runtime.bootstrap.rollout): a changed set reaches the runtimes in waves. Nil, or a share of 1: every runtime
	// at once.
	Records ports.RuntimeBootstrapLister
	Rollout runtimeconfig.RolloutPolicy
}

// useCases builds the use cases of the Runtime controller from deps.
func useCases(d Deps) (*usecase.Provisioner, *usecase.Teardown) {
	provision := &usecase.Provisioner{Shoots: d.Shoots, Seeds: d.Seeds, Profiles: d.Profiles, Access: d.Access, Configurator: d.Configurator,
		Guard: d.Guard, Config: d.Shoot, Policy: d.Deletion, Addresses: d.Addresses.Addresses, Credentials: d.Credentials,
		Bootstrap: d.Bootstrap.Source, DriftPeriod: d.DriftPeriod, AdoptOnly: d.AdoptOnly, RegistryCredentials: d.RegistryCredentials,
		Bindings: d.Bindings, Records: d.Records, Clock: d.ServerClock}
	if b := d.Bootstrap; b.Source != nil && b.Records != nil && !b.Rollout.AllAtOnce() {
		// A changed set of bootstrap manifests reaches the runtimes in waves, stopped when too many fail it.
		provision.Rollout = &usecase.BootstrapRollout{Runtimes: b.Records, Shoots: d.ShootLister, Source: b.Source, Policy: b.Rollout}
	}
	if d.AuditLog.Pool != nil {
		// Dedicated audit log tenants (auditLogAccessEnabled) are claimed while provisioning: the shoot needs one.
		provision.AuditLogs = &usecase.AuditLogClaimer{Pool: d.AuditLog.Pool}
	}
	teardown := &usecase.Teardown{Shoots: d.Shoots, Access: d.Access, Records: d.Records, Policy: d.Deletion, Clock: d.ServerClock,
		Configurator: d.Configurator, Bindings: d.Bindings}
	return provision, teardown
}

// AddToManager registers the Runtime controller with the KCP manager (and, for rollouts in waves, the tracker that
// admits them).
func AddToManager(mgr manager.Manager, deps Deps) error {
	m := NewMetrics(nil)
	provision, teardown := useCases(deps)
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
	if deps.Addresses.Cache != nil {
		// New control plane addresses reach every shoot whose ACL includes them, without a restart.
		toRuntimes := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
			return runtimesNeedingAddresses(ctx, mgr.GetClient(), deps.Shoot)
		})
		b = b.WatchesRawSource(source.Kind(deps.Addresses.Cache, &corev1.ConfigMap{}, toRuntimes))
	}
	b = watchAuditLogPool(mgr.GetCache(), mgr.GetClient(), deps, b)
	b = watchBootstrap(mgr.GetClient(), deps.Bootstrap, b)
	if provision.Rollout != nil {
		// A wave that advances enqueues exactly the Runtimes it admits; held ones are not polled.
		admitted := make(chan event.TypedGenericEvent[reconcile.Request], 1024)
		if err := mgr.Add(&rolloutTracker{rollout: provision.Rollout, clock: deps.Clock, metrics: m,
			interval: usecase.DefaultRolloutInterval, events: admitted}); err != nil {
			return fmt.Errorf("bootstrap rollout: %w", err)
		}
		b = b.WatchesRawSource(source.TypedChannel(admitted, requestEvents()))
	}
	if err := b.WithOptions(controller.Options{MaxConcurrentReconciles: deps.Workers, RateLimiter: retryLimiter(deps.MaxRetryDelay)}).Complete(r); err != nil {
		return fmt.Errorf("runtime controller: %w", err)
	}
	return nil
}

// retryLimiter is controller-runtime's default rate limiter (a per-Runtime backoff from 5ms, doubling with every
// failure, and 10 retries per second overall with bursts of 100) with the per-Runtime backoff capped at maxDelay.
// Without the cap, a runtime API server that was away for a few minutes is looked at again up to 1000s after it
// answers (a failure doubles the delay however it was triggered); nil leaves controller-runtime's default.
func retryLimiter(maxDelay time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	if maxDelay <= 0 {
		return nil
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)})
}
