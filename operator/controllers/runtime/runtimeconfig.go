package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
)

// The bootstrap manifests and their pull secret (runtime.bootstrap) are KCP objects the operator reads and watches.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps;secrets,verbs=get;list;watch

// configureRuntimes gives the use cases the configurator of the objects inside runtimes: one cached client per
// runtime, reading its kubeconfig Secret from the manager's cache, bounded by runtime.timeout; and the drift period.
func configureRuntimes(mgr manager.Manager, opCfg *config.OperatorConfig, namespace string, p *usecase.Provisioner, t *usecase.Teardown) {
	rc := config.RuntimeConfig{DriftPeriod: config.Set(config.DefaultDriftPeriod), Timeout: config.Set(config.DefaultRuntimeTimeout)}
	if opCfg != nil {
		rc = opCfg.Runtime
	}
	configurator := &kube.RuntimeConfigurator{Kubeconfigs: kube.SecretKubeconfigs{Reader: mgr.GetClient(), Namespace: namespace},
		Timeout: rc.Timeout.Duration}
	p.Configurator, p.DriftPeriod, t.Configurator = configurator, rc.DriftPeriod.Duration, configurator
}

// watchBootstrap sets up the source of the bootstrap manifests (runtime.bootstrap): a cache holding only the
// ConfigMap and the pull Secret, read by p.Bootstrap, and a watch that re-reconciles every Runtime when either
// changes, so new manifests reach the runtimes without waiting for their drift period. Without the key nothing is
// set up and no bootstrap is done.
func watchBootstrap(mgr manager.Manager, opCfg *config.OperatorConfig, namespace string, p *usecase.Provisioner,
	b *ctrl.Builder) (*ctrl.Builder, error) {
	if opCfg == nil || opCfg.Runtime.Bootstrap == nil {
		return b, nil
	}
	bc := opCfg.Runtime.Bootstrap
	key := objectKey(bc.ConfigMap, namespace)
	var secret *client.ObjectKey
	if bc.PullSecret != nil {
		k := objectKey(*bc.PullSecret, namespace)
		secret = &k
	}
	c, err := kube.NewBootstrapCache(mgr.GetConfig(), mgr.GetScheme(), key, secret)
	if err != nil {
		return nil, fmt.Errorf("runtime.bootstrap: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("runtime.bootstrap: %w", err)
	}
	p.Bootstrap = &kube.BootstrapSource{Reader: c, ConfigMap: key, PullSecret: secret}
	all := func(ctx context.Context) []reconcile.Request { return allRuntimes(ctx, mgr.GetClient()) }
	b = b.WatchesRawSource(source.Kind(c, &corev1.ConfigMap{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request { return all(ctx) })))
	if secret != nil {
		b = b.WatchesRawSource(source.Kind(c, &corev1.Secret{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.Secret) []reconcile.Request { return all(ctx) })))
	}
	return b, nil
}

func objectKey(ref config.ObjectRef, defaultNamespace string) client.ObjectKey {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = defaultNamespace
	}
	return key
}

// allRuntimes lists every Runtime the operator reconciles.
func allRuntimes(ctx context.Context, kcp client.Reader) []reconcile.Request {
	var list imv1.RuntimeList
	if err := kcp.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Info("cannot list runtimes for the bootstrap manifests change", "error", err.Error())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
