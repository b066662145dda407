// Package auditlog is the audit log pool controller: per AuditLog resource of the landscape's pool it gives back
// reservations an interrupted claim left behind, copies the claimed tenant's read credentials into its runtime and
// releases the tenant once the runtime and its cluster are gone. Claims themselves happen in the Runtime
// controller's provisioning, which needs the tenant for the shoot. It also serves the pool gauges.
package auditlog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
)

// RBAC in KCP: the pool (the operator patches labels, annotations and spec.assignedToRuntimeID) and the tenants'
// read credentials Secrets (read live, one at a time).
// +kubebuilder:rbac:groups=auditlogmanager.kyma-project.io,namespace=kcp-system,resources=auditlogs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get

// Resync is how often a claimed tenant is looked at without an event: rotated read credentials reach the runtime
// and a release missed while the operator was down happens.
const Resync = 30 * time.Minute

// Controller wires the pool controller into the operator (app.Controller).
type Controller struct {
	// Clock is the time source (nil: wall clock).
	Clock ports.Clock
	// RuntimeClients makes clients of runtimes (nil: from their kubeconfig Secrets).
	RuntimeClients kube.RuntimeClientFactory
	// SkipNameValidation allows a second manager with this controller in the same process.
	SkipNameValidation bool
}

var _ app.Controller = (*Controller)(nil)

// Name implements app.Controller.
func (c *Controller) Name() string { return "auditlog-pool" }

// Pool returns the pool adapter of the configuration, reading through the manager's cache; nil when dedicated
// tenants are off (shoot.auditLog.pool.enabled false).
func Pool(mgr manager.Manager, opts app.Options) *kube.AuditLogPool {
	if opts.Config == nil || !opts.Config.Shoot.AuditLog.Pool.Enabled {
		return nil
	}
	p := opts.Config.Shoot.AuditLog.Pool
	pool := &kube.AuditLogPool{Cache: mgr.GetCache(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: p.Namespace}
	if p.Scope == config.PoolScopeCluster {
		pool.Namespace = ""
	} else if pool.Namespace == "" {
		pool.Namespace = opts.WatchNamespaces[0]
	}
	return pool
}

// SetupWithManager implements app.Controller. Nothing is set up while dedicated tenants are off.
func (c *Controller) SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts app.Options) error {
	pool := Pool(mgr, opts)
	if pool == nil {
		return nil
	}
	if pool.Namespace != "" && !slices.Contains(opts.WatchNamespaces, pool.Namespace) {
		return fmt.Errorf("audit log pool: shoot.auditLog.pool.namespace %s is not a watched namespace (%v); the operator reads the pool through its cache",
			pool.Namespace, opts.WatchNamespaces)
	}
	var clk ports.Clock = clock.RealClock{}
	if c.Clock != nil {
		clk = c.Clock
	}
	clients := c.RuntimeClients
	if clients == nil {
		clients = kube.NewRuntimeClientFactory(mgr.GetAPIReader(), opts.WatchNamespaces[0], nil)
	}
	shoots := &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace()}
	m := NewMetrics(nil)
	r := &Reconciler{Clock: clk, Metrics: m, Namespaced: pool.Namespace != "",
		Keep: &usecase.AuditLogKeeper{Pool: pool, Runtimes: &kube.AuditLogRuntimes{Live: mgr.GetAPIReader(), Namespaces: opts.WatchNamespaces},
			Shoots: shoots, Credentials: &kube.KCPSecrets{Live: mgr.GetAPIReader()}, Writer: &kube.RuntimeSecrets{Clients: clients}}}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(kube.AuditLogGVK)
	err := ctrl.NewControllerManagedBy(mgr).Named("auditlog-pool").
		For(obj).
		WatchesRawSource(source.Kind(mgr.GetCache(), &imv1.Runtime{}, runtimeChanged(pool))).
		WatchesRawSource(source.Kind(garden.GetCache(), &gardencorev1beta1.Shoot{}, shootGone(pool))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: &c.SkipNameValidation}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("audit log pool controller: %w", err)
	}
	poolGauges.use(&PoolCollector{Pool: pool, Runtimes: mgr.GetClient()})
	return nil
}

// tenantsOf maps a runtime to the tenants reserved for or assigned to it (from the cache).
func tenantsOf(ctx context.Context, pool ports.AuditLogPool, runtimeID string) []reconcile.Request {
	tenants, err := pool.List(ctx, ports.ReadCached)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("cannot map runtime to audit log tenants", "runtimeID", runtimeID, "error", err.Error())
		return nil
	}
	var out []reconcile.Request
	for _, t := range tenants {
		if t.AssignedTo == runtimeID || t.ReservedFor == runtimeID {
			out = append(out, requestOf(t.Name))
		}
	}
	return out
}

type (
	queue       = workqueue.TypedRateLimitingInterface[reconcile.Request]
	eventDelete = event.TypedDeleteEvent[*gardencorev1beta1.Shoot]
)

// runtimeChanged looks at the tenants of a runtime when it appears, goes, becomes provisioned (the read
// credentials can be copied) or changes auditLogAccessEnabled; status updates of a runtime otherwise cost nothing.
func runtimeChanged(pool ports.AuditLogPool) handler.TypedEventHandler[*imv1.Runtime, reconcile.Request] {
	add := func(ctx context.Context, rt *imv1.Runtime, q queue) {
		for _, r := range tenantsOf(ctx, pool, rt.Name) {
			q.Add(r)
		}
	}
	return handler.TypedFuncs[*imv1.Runtime, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*imv1.Runtime], q queue) { add(ctx, e.Object, q) },
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*imv1.Runtime], q queue) { add(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*imv1.Runtime], q queue) {
			o, n := e.ObjectOld, e.ObjectNew
			if o.Status.ProvisioningCompleted != n.Status.ProvisioningCompleted ||
				ptr.Deref(o.Spec.AuditLogAccessEnabled, false) != ptr.Deref(n.Spec.AuditLogAccessEnabled, false) ||
				o.Status.AuditLogCR != n.Status.AuditLogCR {
				add(ctx, n, q)
			}
		},
	}
}

// shootGone looks at the tenant of a runtime whose shoot was deleted: it may be released now.
func shootGone(pool ports.AuditLogPool) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	return handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e eventDelete, q queue) {
			s := gardener.Observe(e.Object)
			id := s.Marks.RuntimeID
			if pd := s.Marks.PendingDeletion; pd != nil {
				id = pd.RuntimeID
			}
			if id == "" {
				return
			}
			for _, r := range tenantsOf(ctx, pool, id) {
				q.Add(r)
			}
		},
	}
}

func requestOf(tenantName string) reconcile.Request {
	ns, name, found := strings.Cut(tenantName, "/")
	if !found {
		ns, name = "", tenantName
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// Reconciler looks after one tenant of the pool.
type Reconciler struct {
	Keep    *usecase.AuditLogKeeper
	Clock   ports.Clock
	Metrics *Metrics
	// Namespaced is true for a namespaced pool (tenant names carry the namespace).
	Namespaced bool
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	name := req.Name
	if r.Namespaced {
		name = kube.TenantName(req.Namespace, req.Name)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("auditLog", name)
	res, err := r.Keep.Keep(ctx, name, r.Clock.Now())
	if res.RuntimeID != "" {
		log = log.WithValues("runtimeID", res.RuntimeID)
	}
	for _, e := range res.Events {
		r.Metrics.Count(e.Reason)
		log.Info("audit log pool", "event", e.Reason, "message", e.Message, "warning", e.Warning)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("audit log tenant %s: %w", name, err)
	}
	d := res.Decision
	if d.Message != "" {
		log.V(1).Info("audit log pool", "action", d.Action, "message", d.Message)
	}
	switch {
	case d.RequeueAfter > 0:
		return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
	case res.RuntimeID != "" && d.Action != auditlog.KeepRelease:
		return ctrl.Result{RequeueAfter: Resync}, nil
	}
	return ctrl.Result{}, nil
}
