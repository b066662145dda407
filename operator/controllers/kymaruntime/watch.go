package kymaruntime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// indexShootName indexes Runtimes by spec.shoot.name in the manager's cache.
const indexShootName = "spec.shoot.name"

func indexRuntimesByShootName(ctx context.Context, mgr manager.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &imv1.Runtime{}, indexShootName, func(o client.Object) []string {
		rt, ok := o.(*imv1.Runtime)
		if !ok || rt.Spec.Shoot.Name == "" {
			return nil
		}
		return []string{rt.Spec.Shoot.Name}
	})
	if err != nil {
		return fmt.Errorf("index runtimes by shoot name: %w", err)
	}
	return nil
}

// ShootUpdates tells what an update event of a cached shoot changed of what the Runtime controller reads (in the
// operator gardener.ShootUpdates, which knows what the garden cache keeps).
type ShootUpdates interface {
	// Changed reports whether anything read changed, and progressOnly when that is only the progress of an
	// operation still running (its progress, description and time).
	Changed(old, new *gardencorev1beta1.Shoot) (changed, progressOnly bool)
}

// everyChange is the ShootUpdates of a controller given none: every update is news.
type everyChange struct{}

func (everyChange) Changed(_, _ *gardencorev1beta1.Shoot) (bool, bool) { return true, false }

type shootQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// shootEvents enqueues the Runtimes of a shoot (shootRuntimes) on its creation, deletion and the updates that change
// what the Runtime controller reads (updates). Gardener writes a shoot's status tens of times an hour, most of it
// what nothing reads (conditions, constraints): those wake nothing. The progress of a running operation alone is
// read only for the Runtime's status, which shows it at most every progressEvery: such updates enqueue the Runtime
// that much later, so one pass writes the latest of them (the queue keeps the earliest time of a key); with
// progressEvery 0 (every change written) they are news.
func shootEvents(kcp client.Reader, namespaces []string, updates ShootUpdates, progressEvery time.Duration) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	if updates == nil {
		updates = everyChange{}
	}
	enqueue := func(ctx context.Context, s *gardencorev1beta1.Shoot, q shootQueue, after time.Duration) {
		for _, r := range shootRuntimes(ctx, kcp, namespaces, s) {
			if after > 0 {
				q.AddAfter(r, after)
			} else {
				q.Add(r)
			}
		}
	}
	return handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*gardencorev1beta1.Shoot], q shootQueue) {
			enqueue(ctx, e.Object, q, 0)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*gardencorev1beta1.Shoot], q shootQueue) {
			changed, progressOnly := updates.Changed(e.ObjectOld, e.ObjectNew)
			switch {
			case !changed:
			case progressOnly && progressEvery > 0:
				enqueue(ctx, e.ObjectNew, q, progressEvery)
			default:
				enqueue(ctx, e.ObjectNew, q, 0)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*gardencorev1beta1.Shoot], q shootQueue) {
			enqueue(ctx, e.Object, q, 0)
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[*gardencorev1beta1.Shoot], q shootQueue) {
			enqueue(ctx, e.Object, q, 0)
		},
	}
}

// shootRuntimes are the Runtime recorded on the shoot and every Runtime that wants a shoot of that name. The second
// matters when the recorded owner is gone: a new Runtime reusing the name of a cluster that is deleted first (KEB
// unsuspension) waits for the old shoot to disappear, and only this event tells it. The Runtimes come from the
// cache's shoot-name index without a copy (UnsafeDisableDeepCopy; only their keys are read): a shoot event costs
// no Runtime copy, whatever the fleet's size.
func shootRuntimes(ctx context.Context, kcp client.Reader, namespaces []string, s *gardencorev1beta1.Shoot) []reconcile.Request {
	var out []reconcile.Request
	add := func(key types.NamespacedName) {
		for _, r := range out {
			if r.NamespacedName == key {
				return
			}
		}
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	if namespace, name, ok := shoot.RuntimeOf(s.Labels, s.Annotations); ok {
		add(types.NamespacedName{Namespace: namespace, Name: name})
	}
	for _, ns := range namespaces {
		var list imv1.RuntimeList
		if err := kcp.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{indexShootName: s.Name}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "cannot map shoot to runtimes", "shoot", s.Name)
			continue
		}
		for i := range list.Items {
			add(client.ObjectKeyFromObject(&list.Items[i]))
		}
	}
	return out
}

// configMapToRuntime maps an event of a ConfigMap the operator wrote in the garden (structured authentication) to
// its Runtime: a changed ConfigMap is drift to correct.
func configMapToRuntime() handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, cm *corev1.ConfigMap) []reconcile.Request {
		namespace, name, ok := shoot.RuntimeOf(cm.Labels, cm.Annotations)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
	})
}

// configMapChanged lets through changes and deletions only. A ConfigMap appears when the operator applies it just
// before the shoot; reconciling on that event would find the shoot not yet in the cache and apply it again.
func configMapChanged() predicate.TypedPredicate[*corev1.ConfigMap] {
	return predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc: func(event.TypedCreateEvent[*corev1.ConfigMap]) bool { return false },
	}
}

// runtimesNeedingAddresses lists the Runtimes whose shoot ACL includes the control plane's addresses.
func runtimesNeedingAddresses(ctx context.Context, kcp client.Reader, cfg shoot.Config) []reconcile.Request {
	var list imv1.RuntimeList
	if err := kcp.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot list runtimes for the control plane addresses change")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if shoot.NeedsControlPlaneCIDRs(mapping.Runtime(&list.Items[i]), cfg) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
