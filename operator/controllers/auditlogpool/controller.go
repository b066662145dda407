// Package auditlogpool is the audit log pool controller: per AuditLog resource of the landscape's pool it gives back
// reservations an interrupted claim left behind, copies the claimed tenant's read credentials into its runtime and
// releases the tenant once the runtime and its cluster are gone. Claims themselves happen in the Runtime
// controller's provisioning, which needs the tenant for the shoot. It also serves the pool gauges.
package auditlogpool

import (
	"context"
	"fmt"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RBAC in KCP: the pool (the operator patches the reservation labels, spec.assignedToRuntimeID and spec.orphaned) and the tenants'
// read credentials Secrets (read live, one at a time).
// +kubebuilder:rbac:groups=auditlogmanager.kyma-project.io,namespace=kcp-system,resources=auditlogs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get

// Resync is how often a claimed tenant is looked at without an event: rotated read credentials reach the runtime
// and a release missed while the operator was down happens.
const Resync = 30 * time.Minute

// Name of the controller in logs and the --controllers flag.
const Name = "auditlog-pool"

// Deps is what the pool controller claims, keeps and releases tenants with; the composition root (operator/app)
// fills it, and sets the controller up only while dedicated tenants are on (shoot.auditLog.pool.enabled).
type Deps struct {
	// GardenCache is the garden's cache: a deleted shoot's tenant may be released; Observe reads the operator's
	// marks off it.
	GardenCache cache.Cache
	Observe     ShootObserver
	Clock       ports.Clock
	// Shoots and ShootLister tell whether a runtime's cluster is gone.
	Shoots      ports.Shoots
	ShootLister ports.ShootLister
	Pool        ports.AuditLogPool
	// Kind is the AuditLog resource the pool is made of (watched in the manager's cache).
	Kind schema.GroupVersionKind
	// TenantName names a tenant of the pool from its object's namespace and name (the name Pool uses).
	TenantName  func(namespace, name string) string
	Runtimes    ports.AuditLogRuntimes
	Credentials ports.AuditLogCredentials
	Secrets     ports.RuntimeSecretWriter
	// CredentialsPolicy says which KCP Secrets are copied into runtimes as read credentials.
	CredentialsPolicy auditlog.CredentialsPolicy
}

// ShootObserver is the port that reads the domain's observation of a shoot (the operator's marks) off the object of
// a garden event; the Gardener adapter implements it.
type ShootObserver interface {
	Observe(*gardencorev1beta1.Shoot) shootstate.Shoot
}

// AddToManager registers the pool controller with the KCP manager and serves the pool gauges.
func AddToManager(mgr manager.Manager, deps Deps) error {
	keep := &usecase.AuditLogKeeper{Pool: deps.Pool, Runtimes: deps.Runtimes, Shoots: deps.Shoots, ShootList: deps.ShootLister,
		Credentials: deps.Credentials, Writer: deps.Secrets, CredentialsPolicy: deps.CredentialsPolicy}
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps, keep, NewMetrics(nil))
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(deps.Kind)
	err := ctrl.NewControllerManagedBy(mgr).Named(Name).
		For(obj).
		WatchesRawSource(source.Kind(mgr.GetCache(), &imv1.Runtime{}, runtimeChanged(deps.Pool))).
		WatchesRawSource(source.Kind(deps.GardenCache, &gardencorev1beta1.Shoot{}, shootGone(deps.Pool, deps.Observe))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("audit log pool controller: %w", err)
	}
	poolGauges.Use(&PoolCollector{Pool: deps.Pool, Runtimes: mgr.GetClient()})
	return nil
}

// tenantsOf maps a runtime to the tenants reserved for or assigned to it (from the cache).
func tenantsOf(ctx context.Context, pool ports.AuditLogPool, runtimeID string) []reconcile.Request {
	tenants, err := pool.List(ctx, ports.ReadCached)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot map runtime to audit log tenants", "runtimeID", runtimeID)
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
func shootGone(pool ports.AuditLogPool, observe ShootObserver) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	return handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e eventDelete, q queue) {
			s := observe.Observe(e.Object)
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
