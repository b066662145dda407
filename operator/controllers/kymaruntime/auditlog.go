package kymaruntime

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// watchAuditLogPool wakes the Runtimes waiting for a dedicated audit log tenant (AuditLogPoolEmpty) when the pool
// changes, so a tenant the landscape adds or a release gives back is used at once. Without the pool
// (shoot.auditLog.pool.enabled false) nothing is watched; useCases then claims nothing either.
func watchAuditLogPool(kcp cache.Cache, c client.Reader, deps Deps, b *ctrl.Builder) *ctrl.Builder {
	if deps.AuditLog.Pool == nil {
		return b
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(deps.AuditLog.Kind)
	wake := handler.TypedFuncs[*unstructured.Unstructured, reconcile.Request]{
		CreateFunc: func(ctx context.Context, _ event.TypedCreateEvent[*unstructured.Unstructured], q queue) {
			addAll(q, waitingForAuditLog(ctx, c))
		},
		UpdateFunc: func(ctx context.Context, _ event.TypedUpdateEvent[*unstructured.Unstructured], q queue) {
			addAll(q, waitingForAuditLog(ctx, c))
		},
	}
	return b.WatchesRawSource(source.Kind(kcp, obj, wake))
}

func addAll(q queue, reqs []reconcile.Request) {
	for _, r := range reqs {
		q.Add(r)
	}
}

// waitingForAuditLog lists the Runtimes whose Ready reason says they wait for a free tenant.
func waitingForAuditLog(ctx context.Context, kcp client.Reader) []reconcile.Request {
	var list imv1.RuntimeList
	if err := kcp.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot list runtimes waiting for an audit log tenant")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		c := meta.FindStatusCondition(list.Items[i].Status.Conditions, imv1.ConditionReady)
		if c != nil && (c.Reason == string(lifecycle.ReasonAuditLogPoolEmpty) || c.Reason == string(lifecycle.ReasonClaimingAuditLog) ||
			c.Reason == string(lifecycle.ReasonAuditLogTenantInvalid)) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
