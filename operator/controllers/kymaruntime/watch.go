package kymaruntime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

// shootToRuntimes maps a shoot event to the Runtime recorded on the shoot and to every Runtime that wants a shoot of
// that name. The second matters when the recorded owner is gone: a new Runtime reusing the name of a cluster that
// is deleted first (KEB unsuspension) waits for the old shoot to disappear, and only this event tells it.
func shootToRuntimes(kcp client.Reader, namespaces []string) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, s *gardencorev1beta1.Shoot) []reconcile.Request {
		seen := map[types.NamespacedName]bool{}
		var out []reconcile.Request
		add := func(key types.NamespacedName) {
			if !seen[key] {
				seen[key] = true
				out = append(out, reconcile.Request{NamespacedName: key})
			}
		}
		if namespace, name, ok := shoot.RuntimeOf(s.Labels, s.Annotations); ok {
			add(types.NamespacedName{Namespace: namespace, Name: name})
		}
		for _, ns := range namespaces {
			var list imv1.RuntimeList
			if err := kcp.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{indexShootName: s.Name}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "cannot map shoot to runtimes", "shoot", s.Name)
				continue
			}
			for i := range list.Items {
				add(client.ObjectKeyFromObject(&list.Items[i]))
			}
		}
		return out
	})
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
