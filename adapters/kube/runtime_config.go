package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Labels on the ClusterRoleBindings the operator creates in runtimes; only bindings with them are ever deleted.
const (
	LabelAdminBinding    = "reconciler.kyma-project.io/managed-by"
	AdminBindingValue    = "infrastructure-manager"
	adminBindingPrefix   = "kim-admin-"
	clusterAdminRoleName = "cluster-admin"
)

func typesUID(s string) types.UID { return types.UID(s) }

// RuntimeConfigurator implements ports.RuntimeConfigurator with a client built from the runtime's kubeconfig Secret.
type RuntimeConfigurator struct {
	// KCP reads kubeconfig Secrets.
	KCP client.Reader
	// Namespace is where the kubeconfig Secrets live.
	Namespace string
	// NewClient builds a client for a runtime from its kubeconfig; nil uses client.New with the default scheme.
	NewClient func(kubeconfig []byte) (client.Client, error)
}

var _ ports.RuntimeConfigurator = (*RuntimeConfigurator)(nil)

// AdminBindingName is the name of the binding for user: stable and valid for any user ID.
func AdminBindingName(user string) string {
	sum := sha256.Sum256([]byte(user))
	return adminBindingPrefix + hex.EncodeToString(sum[:8])
}

// Configure implements ports.RuntimeConfigurator.
func (r *RuntimeConfigurator) Configure(ctx context.Context, cfg ports.RuntimeConfig) error {
	c, err := r.runtimeClient(ctx, cfg.RuntimeID)
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, u := range cfg.Administrators {
		want[AdminBindingName(u)] = u
	}
	var have rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &have, client.MatchingLabels{LabelAdminBinding: AdminBindingValue}); err != nil {
		return fmt.Errorf("list admin bindings of runtime %s: %w: %w", cfg.RuntimeID, ports.ErrRuntimeUnreachable, err)
	}
	// Bindings are created before stale ones are deleted: a user who keeps access through a new binding (another
	// name, e.g. one the previous system created) never loses it in between.
	for name, user := range want {
		b := &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelAdminBinding: AdminBindingValue}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterAdminRoleName},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		err := c.Create(ctx, b)
		if apierrors.IsAlreadyExists(err) {
			continue // same name means same user (the name is derived from it)
		}
		if err != nil {
			return fmt.Errorf("create admin binding for %s in runtime %s: %w: %w", user, cfg.RuntimeID, ports.ErrTransient, err)
		}
	}
	for i := range have.Items {
		b := &have.Items[i]
		if _, ok := want[b.Name]; ok {
			continue
		}
		if err := c.Delete(ctx, b); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete stale admin binding %s of runtime %s: %w: %w", b.Name, cfg.RuntimeID, ports.ErrTransient, err)
		}
	}
	return nil
}

func (r *RuntimeConfigurator) runtimeClient(ctx context.Context, runtimeID string) (client.Client, error) {
	s := &corev1.Secret{}
	if err := r.KCP.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: kubeconfig.SecretName(runtimeID)}, s); err != nil {
		return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	kc := s.Data[kubeconfig.SecretKey]
	if len(kc) == 0 {
		return nil, fmt.Errorf("kubeconfig of runtime %s is empty: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	if r.NewClient != nil {
		return r.NewClient(kc)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("client for runtime %s: %w: %w", runtimeID, ports.ErrRuntimeUnreachable, err)
	}
	return c, nil
}
