package registrycachesync

import (
	"bytes"
	"context"
	"hash/fnv"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// maxStartSpread bounds how long after the operator starts (or a Runtime appears) its first sync waits: syncs of a
// whole fleet are spread over it instead of all hitting runtimes at once.
const maxStartSpread = 10 * time.Minute

func requestFor(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// runtimeEvents enqueues a Runtime when it appears (spread), when its spec changes (KEB may have written the
// field), when the sync annotation changes (a trigger), when it becomes provisioned (its runtime can now be read)
// and when it goes (collection of its garden copies).
func runtimeEvents(interval time.Duration) handler.TypedEventHandler[*imv1.Runtime, reconcile.Request] {
	spreadOver := min(interval, maxStartSpread)
	return handler.TypedFuncs[*imv1.Runtime, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*imv1.Runtime], q queue) {
			q.AddAfter(requestFor(e.Object.Namespace, e.Object.Name), spread(e.Object.Name, spreadOver))
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*imv1.Runtime], q queue) {
			o, n := e.ObjectOld, e.ObjectNew
			if o.Generation != n.Generation || o.Annotations[imv1.AnnotationSyncRegistryCache] != n.Annotations[imv1.AnnotationSyncRegistryCache] ||
				o.Status.ProvisioningCompleted != n.Status.ProvisioningCompleted || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				q.Add(requestFor(n.Namespace, n.Name))
			}
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*imv1.Runtime], q queue) {
			q.Add(requestFor(e.Object.Namespace, e.Object.Name))
		},
	}
}

// shootEvents enqueues the Runtime of a shoot whose registry caches or referenced resources changed, that
// finished a reconcile with caches (their status becomes Applied), or that is gone (its copies can be collected).
func shootEvents(runtimeNamespace string, observe ShootObserver) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	enqueue := func(s *gardencorev1beta1.Shoot, q queue) {
		if ns, name, ok := shoot.RuntimeOf(s.Labels, s.Annotations); ok {
			q.Add(requestFor(ns, name))
		} else if id := observe.Observe(s).Marks.RuntimeID; id != "" {
			q.Add(requestFor(runtimeNamespace, id))
		}
	}
	return handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*gardencorev1beta1.Shoot], q queue) {
			o, n := e.ObjectOld, e.ObjectNew
			if !hasCaches(o) && !hasCaches(n) {
				return
			}
			if !cachesEqual(o, n) || justReconciled(observe, o, n) {
				enqueue(n, q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*gardencorev1beta1.Shoot], q queue) {
			enqueue(e.Object, q)
		},
	}
}

func registryExtension(s *gardencorev1beta1.Shoot) *gardencorev1beta1.Extension {
	for i := range s.Spec.Extensions {
		if s.Spec.Extensions[i].Type == shoot.ExtensionRegistryCache {
			return &s.Spec.Extensions[i]
		}
	}
	return nil
}

func hasCaches(s *gardencorev1beta1.Shoot) bool { return registryExtension(s) != nil }

func cachesEqual(a, b *gardencorev1beta1.Shoot) bool {
	ea, eb := registryExtension(a), registryExtension(b)
	if ea == nil || eb == nil {
		return ea == eb
	}
	raw := func(e *gardencorev1beta1.Extension) []byte {
		if e.ProviderConfig == nil {
			return nil
		}
		return e.ProviderConfig.Raw
	}
	return ptr.Deref(ea.Disabled, false) == ptr.Deref(eb.Disabled, false) && bytes.Equal(raw(ea), raw(eb)) &&
		len(a.Spec.Resources) == len(b.Spec.Resources)
}

func justReconciled(observe ShootObserver, o, n *gardencorev1beta1.Shoot) bool {
	return !observe.Observe(o).Reconciled() && observe.Observe(n).Reconciled()
}

// requestHandler enqueues the requests sent on the trigger channel.
type requestHandler struct{}

func (requestHandler) Create(context.Context, event.TypedCreateEvent[reconcile.Request], queue) {}
func (requestHandler) Update(context.Context, event.TypedUpdateEvent[reconcile.Request], queue) {}
func (requestHandler) Delete(context.Context, event.TypedDeleteEvent[reconcile.Request], queue) {}
func (requestHandler) Generic(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q queue) {
	q.Add(e.Object)
}

// spread is a stable offset in [0, over) per runtime.
func spread(name string, over time.Duration) time.Duration {
	if over <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(over)) //nolint:gosec // over is positive
}

// jitter moves d by up to ±10%, stable per runtime, so periodic syncs of a fleet stay spread.
func jitter(name string, d time.Duration) time.Duration {
	return d - d/10 + spread(name, d/5)
}
