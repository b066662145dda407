package runtime

import (
	"context"
	"errors"
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
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/mapping"
)

// The KCP ConfigMap with the control plane's egress addresses (shoot.acl.configMap) is read and watched.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch

// shootConfig is the generation configuration for rt: the operator's, plus the control plane's egress CIDRs when
// rt's API server ACL needs them (read only then, so a broken address source affects only those Runtimes). A
// source that cannot be read as CIDRs becomes the domain's stable refusal, not a silent lock-out.
func (r *Reconciler) shootConfig(ctx context.Context, rt shoot.Runtime) (shoot.Config, error) {
	cfg := r.ShootConfig
	if r.Addresses == nil || !shoot.NeedsControlPlaneCIDRs(rt, cfg) {
		return cfg, nil
	}
	cidrs, err := r.Addresses.EgressCIDRs(ctx)
	switch {
	case errors.Is(err, ports.ErrAddressesInvalid):
		cfg.ACL.ControlPlaneCIDRsProblem = err.Error()
	case err != nil:
		return shoot.Config{}, fmt.Errorf("control plane egress addresses: %w", err)
	}
	cfg.ACL.ControlPlaneCIDRs = cidrs
	return cfg, nil
}

// migrateCredentialsBinding switches an existing shoot that still names a SecretBinding to the CredentialsBinding
// of spec before spec is applied (Gardener rejects a shoot naming both). It happens once: afterwards the shoot has
// no SecretBinding.
func (r *Reconciler) migrateCredentialsBinding(ctx context.Context, rt *imv1.Runtime, spec shoot.Spec) error {
	if r.Credentials == nil {
		return nil
	}
	cur, err := r.Shoots.Current(ctx, spec.Name)
	if err != nil || cur == nil {
		return err
	}
	binding, needed := shoot.CredentialsBindingMigration(*cur, spec)
	if !needed {
		return nil
	}
	migrated, err := r.Credentials.MigrateToCredentialsBinding(ctx, spec.Name, binding)
	if err != nil {
		return fmt.Errorf("switch shoot %s to credentials binding %s: %w", spec.Name, binding, err)
	}
	if migrated {
		ctrl.LoggerFrom(ctx).Info("shoot switched from its SecretBinding to a CredentialsBinding", "credentialsBinding", binding)
		r.Recorder.Eventf(rt, "Normal", "CredentialsBindingMigrated", "Shoot %s now uses CredentialsBinding %s instead of its SecretBinding", spec.Name, binding)
	}
	return nil
}

// watchControlPlaneAddresses sets up the source of the control plane's egress addresses (shoot.acl.configMap): a
// cache holding only that ConfigMap, read by r.Addresses, and a watch that re-reconciles every Runtime whose ACL
// depends on it when it changes, so new addresses reach all affected shoots without a restart. Without the key,
// nothing is set up and ACLs of Runtimes are refused (see shoot.NeedsControlPlaneCIDRs).
func (c *Controller) watchControlPlaneAddresses(mgr manager.Manager, opCfg *config.OperatorConfig, runtimeNamespace string,
	r *Reconciler, b *ctrl.Builder) (*ctrl.Builder, error) {
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
	r.Addresses = &kube.ControlPlaneAddresses{Reader: cmCache, Key: key}
	toRuntimes := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
		return runtimesNeedingAddresses(ctx, mgr.GetClient(), r.ShootConfig)
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
