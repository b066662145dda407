package integration_test

import (
	"context"
	"net"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// TestIntegrationIdentityContracts runs the RuntimeIdentities and IdentityKubeconfigStore contracts on a real
// kube-apiserver that is KCP and runtime at once: the admin kubeconfig Secret names the server itself (a
// system:masters client certificate), a second one names a server that accepts connections and never answers.
func TestIntegrationIdentityContracts(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs kube-apiserver and etcd (KUBEBUILDER_ASSETS)")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest (is KUBEBUILDER_ASSETS=$(hack/envtest.sh) set?): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kcp-system"}}); err != nil {
		t.Fatal(err)
	}
	admin, err := env.ControlPlane.AddUser(envtest.User{Name: "kim-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	adminKubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	putAdminKubeconfig(t, c, "rid", adminKubeconfig)
	putAdminKubeconfig(t, c, "hanging", hangingKubeconfig(t, adminKubeconfig))

	ids := &kube.RuntimeIdentities{KCP: c, Clients: kube.NewRuntimeClients(kube.RuntimeClientsOptions{RequestTimeout: time.Second}), CallTimeout: 3 * time.Second}
	t.Run("RuntimeIdentities", func(t *testing.T) {
		contract.RunRuntimeIdentitiesContract(t, func(t *testing.T) contract.IdentitiesFixture {
			return contract.IdentitiesFixture{
				Identities: ids,
				Runtime:    ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"},
				Missing:    ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "missing"},
				Hanging:    ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "hanging"},
				CallBound:  5 * time.Second,
				Now:        time.Now,
				WhoAmI: func(ctx context.Context, token string) (string, error) {
					cs, err := kubernetes.NewForConfig(&rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}})
					if err != nil {
						return "", err
					}
					r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
					if err != nil {
						return "", err
					}
					return r.Status.UserInfo.Username, nil
				},
				Objects: func(ctx context.Context, owner sakubeconfig.Owner) ([]sakubeconfig.ObjectRef, error) {
					return listOwned(ctx, c, owner)
				},
				NamespaceExists: func(ctx context.Context, ns string) (bool, error) {
					err := c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
					if apierrors.IsNotFound(err) {
						return false, nil
					}
					return err == nil, err
				},
				PutNamespace: func(ctx context.Context, ns string) error {
					return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
				},
				PutServiceAccount: func(ctx context.Context, sa sakubeconfig.ServiceAccount) error {
					if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
						return err
					}
					return c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name, Labels: map[string]string{"app": "customer"}}})
				},
				PutClusterRole: func(ctx context.Context, name string, cr sakubeconfig.ClusterRole) error {
					role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
					for _, r := range cr.Rules {
						role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs,
							NonResourceURLs: r.NonResourceURLs})
					}
					if cr.Aggregated {
						role.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
							{MatchLabels: map[string]string{"kim.contract/aggregate-to-" + name: "true"}}}}
					}
					return c.Create(ctx, role)
				},
			}
		})
	})

	t.Run("IdentityKubeconfigStore", func(t *testing.T) {
		managed := labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})
		secretCache, err := cache.New(cfg, cache.Options{Scheme: clientgoscheme.Scheme,
			ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: managed}}})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		go func() { _ = secretCache.Start(cctx) }()
		if _, err := secretCache.GetInformer(cctx, &corev1.Secret{}); err != nil {
			t.Fatal(err)
		}
		secretCache.WaitForCacheSync(cctx)
		store := kube.NewIdentityKubeconfigStore(secretCache, c, c)
		contract.RunIdentityKubeconfigStoreContract(t, func(t *testing.T) contract.IdentityStoreFixture {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "identity-store-"}}
			if err := c.Create(t.Context(), ns); err != nil {
				t.Fatal(err)
			}
			return contract.IdentityStoreFixture{
				Store: store, Namespace: ns.Name, ConcurrentWrites: 50,
				ReadKey: func(ctx context.Context, ref ports.SecretRef) ([]byte, bool, error) {
					var s corev1.Secret
					err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &s)
					if apierrors.IsNotFound(err) {
						return nil, false, nil
					}
					return s.Data[ref.Key], err == nil, err
				},
				PutForeign: func(ctx context.Context, ref ports.SecretRef, data map[string][]byte, l, a map[string]string) error {
					return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: l, Annotations: a},
						Data: data}, client.FieldOwner("someone-else"))
				},
			}
		})
	})
}

// putAdminKubeconfig stores kc as the admin kubeconfig Secret of runtimeID, as the GardenerCluster controller does.
func putAdminKubeconfig(t *testing.T, c client.Client, runtimeID string, kc []byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kubeconfig.SecretName(runtimeID),
		Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}, Data: map[string][]byte{kubeconfig.SecretKey: kc}}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// hangingKubeconfig is kc pointed at a local listener that accepts connections and never answers.
func hangingKubeconfig(t *testing.T, kc []byte) []byte {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = l.Close() })
	go func() {
		var held []net.Conn
		for {
			conn, err := l.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, conn) // never read, never written: the TLS handshake waits
		}
	}()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://" + l.Addr().String()
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// listOwned lists the RBAC objects and ServiceAccounts labelled for owner.
func listOwned(ctx context.Context, c client.Client, owner sakubeconfig.Owner) ([]sakubeconfig.ObjectRef, error) {
	sel := client.MatchingLabels{sakubeconfig.LabelOwner: owner.Key()}
	var out []sakubeconfig.ObjectRef
	lists := map[string]client.ObjectList{
		sakubeconfig.KindServiceAccount: &corev1.ServiceAccountList{}, sakubeconfig.KindRole: &rbacv1.RoleList{},
		sakubeconfig.KindClusterRole: &rbacv1.ClusterRoleList{}, sakubeconfig.KindRoleBinding: &rbacv1.RoleBindingList{},
		sakubeconfig.KindClusterRoleBinding: &rbacv1.ClusterRoleBindingList{},
	}
	for kind, list := range lists {
		if err := c.List(ctx, list, sel); err != nil {
			return nil, err
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			o := it.(client.Object)
			out = append(out, sakubeconfig.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	return out, nil
}
