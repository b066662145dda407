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
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/mapping"
)

// The KCP ConfigMap with the control plane's egress addresses (shoot.acl.configMap) is read and watched.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch

// watchControlPlaneAddresses sets up the source of the control plane's egress addresses (shoot.acl.configMap): a
// cache holding only that ConfigMap, read by r.Addresses, and a watch that re-reconciles every Runtime whose ACL
// depends on it when it changes, so new addresses reach all affected shoots without a restart. Without the key,
// nothing is set up and ACLs of Runtimes are refused (see shoot.NeedsControlPlaneCIDRs).
func (c *Controller) watchControlPlaneAddresses(mgr manager.Manager, opCfg *config.OperatorConfig, runtimeNamespace string,
	p *usecase.Provisioner, b *ctrl.Builder) (*ctrl.Builder, error) {
	if opCfg == nil || opCfg.Shoot.ACL.ConfigMap == nil {
		return b, nil
	}
	key := client.ObjectKey{Namespace: opCfg.Shoot.ACL.ConfigMap.Namespace, Name: opCfg.Shoot.ACL.ConfigMap.Name}
	if key.Namespace == "" {
		key.Namespace = runtimeNamespace
	}
	cmCache, err := kube.NewControlPlaneAddressesCache(mgr.GetConfig(), mgr.GetScheme(), key)
	if err != nil {
		return nil, fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	if err := mgr.Add(cmCache); err != nil {
		return nil, fmt.Errorf("shoot.acl.configMap: %w", err)
	}
	p.Addresses = &kube.ControlPlaneAddresses{Reader: cmCache, Key: key}
	toRuntimes := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
		return runtimesNeedingAddresses(ctx, mgr.GetClient(), p.Config)
	})
	return b.WatchesRawSource(source.Kind(cmCache, &corev1.ConfigMap{}, toRuntimes)), nil
}

// runtimesNeedingAddresses lists the Runtimes whose shoot ACL includes the control plane's addresses.
func runtimesNeedingAddresses(ctx context.Context, kcp client.Reader, cfg shoot.Config) []reconcile.Request {
	var list imv1.RuntimeList
	if err := kcp.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Info("cannot list runtimes for the control plane addresses change", "error", err.Error())
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
