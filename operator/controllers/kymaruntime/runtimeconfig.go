package kymaruntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The bootstrap manifests and their pull secret (runtime.bootstrap) are KCP objects the operator reads and watches.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps;secrets,verbs=get;list;watch

// watchBootstrap re-reconciles every Runtime when the bootstrap manifests or their pull secret change (the cache
// the composition root built for runtime.bootstrap), so new manifests reach the runtimes without waiting for their
// drift period. Without bootstrap manifests nothing is watched.
func watchBootstrap(kcp client.Reader, p Bootstrap, b *ctrl.Builder) *ctrl.Builder {
	if p.Cache == nil {
		return b
	}
	all := func(ctx context.Context) []reconcile.Request { return allRuntimes(ctx, kcp) }
	b = b.WatchesRawSource(source.Kind(p.Cache, &corev1.ConfigMap{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request { return all(ctx) })))
	if p.PullSecret {
		b = b.WatchesRawSource(source.Kind(p.Cache, &corev1.Secret{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.Secret) []reconcile.Request { return all(ctx) })))
	}
	return b
}

// allRuntimes lists every Runtime the operator reconciles.
func allRuntimes(ctx context.Context, kcp client.Reader) []reconcile.Request {
	var list imv1.RuntimeList
	if err := kcp.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot list runtimes for the bootstrap manifests change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
