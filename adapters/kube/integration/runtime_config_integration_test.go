package integration_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// runtimes is two runtime API servers (one serving OpenIDConnect resources, one not), shared by the subtests, which
// clean up after themselves.
type runtimes struct {
	pool        *runtimeapi.Pool
	kubeconfigs map[string][]byte // runtime ID -> kubeconfig
	mu          sync.Mutex
}

const (
	servedKey = "contract/served"
	bareKey   = "contract/bare"
)

func startRuntimes(t *testing.T) *runtimes {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs kube-apiserver and etcd (KUBEBUILDER_ASSETS)")
	}
	r := &runtimes{pool: runtimeapi.NewPool(runtimeapi.PoolOptions{Mode: runtimeapi.ModePerShoot}), kubeconfigs: map[string][]byte{}}
	t.Cleanup(func() { _ = r.pool.Stop() })
	for _, key := range []string{servedKey, bareKey} {
		if _, err := r.pool.Ensure(t.Context(), key, true); err != nil {
			t.Fatalf("start runtime API server (is KUBEBUILDER_ASSETS=$(hack/envtest.sh) set?): %v", err)
		}
	}
	if err := r.pool.ServeOpenIDConnect(t.Context(), servedKey); err != nil {
		t.Fatal(err)
	}
	return r
}

// Kubeconfig implements kube.KubeconfigSource.
func (r *runtimes) Kubeconfig(_ context.Context, runtimeID string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kc, ok := r.kubeconfigs[runtimeID]
	if !ok {
		return nil, fmt.Errorf("runtime %s: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	return kc, nil
}

func (r *runtimes) admin(t *testing.T, key string) *rest.Config {
	t.Helper()
	cfg, err := r.pool.AdminConfig(key)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// register gives runtimeID a kubeconfig of the server behind key (a fresh admin certificate each time).
func (r *runtimes) register(t *testing.T, runtimeID, key string) {
	t.Helper()
	cfg := r.admin(t, key)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["runtime"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["runtime"] = &clientcmdapi.Context{Cluster: "runtime", AuthInfo: "admin"}
	kc.CurrentContext = "runtime"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kubeconfigs[runtimeID] = raw
}

// TestIntegrationRuntimeConfigurator runs on two real runtime API servers (started once: a few seconds each): the
// contract, the order of binding writes, the client cache and the OpenIDConnect CRD's validation.
func TestIntegrationRuntimeConfigurator(t *testing.T) {
	r := startRuntimes(t)
	t.Run("Contract", func(t *testing.T) { runtimeConfiguratorContract(t, r) })
	t.Run("AdministratorsKeepAccess", func(t *testing.T) { administratorsKeepAccess(t, r) })
	t.Run("Clients", func(t *testing.T) { runtimeClients(t, r) })
	t.Run("OpenIDConnectCRDValidates", func(t *testing.T) { openIDConnectCRDValidates(t, r) })
}

// runtimeConfiguratorContract runs the contract against real runtime API servers, the one serving OpenIDConnect
// resources with the CRD of the sandbox assets (the objects are validated by it).
func runtimeConfiguratorContract(t *testing.T, r *runtimes) {
	n := 0
	contract.RunRuntimeConfiguratorContract(t, func(t *testing.T, o contract.FixtureOptions) contract.RuntimeConfiguratorFixture {
		key := bareKey
		if o.ServeOIDC {
			key = servedKey
		}
		n++
		id := fmt.Sprintf("contract-%d", n)
		r.register(t, id, key)
		in := newRealInside(t, r, key)
		t.Cleanup(func() { in.clean(t) })
		const timeout = 3 * time.Second
		return contract.RuntimeConfiguratorFixture{Configurator: &kube.RuntimeConfigurator{Clients: kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: r}), Timeout: timeout},
			RuntimeID: id, Inside: in, Timeout: timeout, Unreachable: id + "-without-kubeconfig"}
	})
}

// administratorsKeepAccess watches the bindings while earlier names are adopted and a binding under
// the operator's name with the wrong subject is corrected: at no moment is an administrator who stays without one.
func administratorsKeepAccess(t *testing.T, r *runtimes) {
	r.register(t, "keep", servedKey)
	in := newRealInside(t, r, servedKey)
	defer in.clean(t)
	ctx := t.Context()
	admins := []string{"alice@example.com", "bob@example.com"}
	for i, u := range admins {
		if err := in.PutBinding(ctx, runtimeconfig.ObservedBinding{Name: fmt.Sprintf("kim-admin-%016d", i), Managed: true, RoleKind: "ClusterRole",
			RoleName: runtimeconfig.ClusterAdminRole, Subjects: []runtimeconfig.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: u}}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := in.core.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range list.Items {
		state[b.Name] = b
	}
	w, err := in.core.RbacV1().ClusterRoleBindings().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	d, err := runtimeconfig.Compute(runtimeconfig.Facts{Runtime: contractRuntime("keep", admins)})
	if err != nil {
		t.Fatal(err)
	}
	c := &kube.RuntimeConfigurator{Clients: kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: r})}
	if res, err := c.Configure(ctx, d); err != nil || res.Problem() != nil {
		t.Fatalf("configure: %v %+v", err, res.Problem())
	}
	events := 0
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			b, ok := ev.Object.(*rbacv1.ClusterRoleBinding)
			if !ok {
				continue
			}
			events++
			if ev.Type == watch.Deleted {
				delete(state, b.Name)
			} else {
				state[b.Name] = *b
			}
			for _, u := range admins {
				if !bound(state, u) {
					t.Fatalf("after event %d (%s %s) administrator %s has no cluster-admin binding", events, ev.Type, b.Name, u)
				}
			}
		case <-deadline:
			done = true
		}
	}
	if events < 4 { // two created, two deleted
		t.Errorf("saw %d binding events, want the adoption's creates and deletes", events)
	}
}

func bound(state map[string]rbacv1.ClusterRoleBinding, user string) bool {
	for _, b := range state {
		if b.RoleRef.Name != runtimeconfig.ClusterAdminRole {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				return true
			}
		}
	}
	return false
}

// runtimeClients: one client per runtime, kept across calls, replaced when the kubeconfig rotates,
// bounded, dropped by Forget.
func runtimeClients(t *testing.T, r *runtimes) {
	r.register(t, "a", servedKey)
	r.register(t, "b", bareKey)
	c := &kube.RuntimeConfigurator{Clients: kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: r, MaxClients: 1})}
	configure := func(id string) {
		t.Helper()
		d, err := runtimeconfig.Compute(runtimeconfig.Facts{Runtime: contractRuntime(id, []string{"alice@example.com"})})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Configure(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	configure("a")
	configure("a")
	if n := c.CachedClients(); n != 1 {
		t.Errorf("%d clients after two calls for one runtime, want 1", n)
	}
	r.register(t, "a", servedKey) // rotated: a new certificate
	configure("a")
	configure("b")
	if n := c.CachedClients(); n != 1 {
		t.Errorf("%d clients with MaxClients 1, want 1", n)
	}
	c.Forget("b")
	if n := c.CachedClients(); n != 0 {
		t.Errorf("%d clients after Forget, want 0", n)
	}
	in := newRealInside(t, r, servedKey)
	in.clean(t)
	newRealInside(t, r, bareKey).clean(t)
}

// openIDConnectCRDValidates: the runtime's API server checks OpenIDConnect objects against the CRD
// the sandbox installs (the real schema): what the authenticator would not accept is refused.
func openIDConnectCRDValidates(t *testing.T, r *runtimes) {
	in := newRealInside(t, r, servedKey)
	bad := kube.OIDCObject(runtimeconfig.OIDCResource{Name: "bad", IssuerURL: "http://plain.example.com", ClientID: "c", UsernameClaim: "sub",
		SupportedSigningAlgs: []string{"HS256"}})
	_, err := in.dynamic.Resource(kube.OpenIDConnectResource).Create(t.Context(), bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "issuerURL") || !strings.Contains(err.Error(), "supportedSigningAlgs") {
		t.Errorf("an http issuer with HS256 was not refused by the CRD: %v", err)
	}
	good := kube.OIDCObject(runtimeconfig.OIDCResource{Name: "good", IssuerURL: "https://i.example.com", ClientID: "c", UsernameClaim: "sub",
		CABundle: contract.CABundle, JWKS: contract.JWKS})
	created, err := in.dynamic.Resource(kube.OpenIDConnectResource).Create(t.Context(), good, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.DeleteOIDC(context.Background(), "good") }()
	got := kube.ObserveOIDC(created)
	if got.CABundle != contract.CABundle || string(got.JWKS) != string(contract.JWKS) ||
		len(got.SupportedSigningAlgs) != 1 || got.SupportedSigningAlgs[0] != "RS256" {
		t.Errorf("read back %+v: the CA bundle and key set must survive, the algorithms default to RS256", got.OIDCResource)
	}
}

// realInside acts on a runtime API server as its administrator.
type realInside struct {
	r       *runtimes
	key     string
	core    kubernetes.Interface
	dynamic dynamic.Interface
}

func newRealInside(t *testing.T, r *runtimes, key string) *realInside {
	t.Helper()
	cfg := r.admin(t, key)
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &realInside{r: r, key: key, core: core, dynamic: dyn}
}

// clean removes what a subtest left (the namespace stays: envtest runs no namespace controller to finish a deletion).
func (in *realInside) clean(t *testing.T) {
	ctx := context.Background()
	if list, err := in.OIDC(ctx); err == nil {
		for _, o := range list {
			_ = in.DeleteOIDC(ctx, o.Name)
		}
	}
	if list, err := in.core.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{}); err == nil {
		for _, b := range list.Items {
			if !strings.HasPrefix(b.Name, "system:") && !strings.HasPrefix(b.Name, "gardener.cloud:") && b.Name != "cluster-admin" {
				_ = in.core.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
			}
		}
	}
	ns := runtimeconfig.Namespace
	_ = in.core.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	_ = in.core.AppsV1().Deployments(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = in.core.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

func (in *realInside) Namespace(ctx context.Context, name string) (bool, error) {
	_, err := in.core.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	return err == nil, ignoreNotFound(err)
}

func (in *realInside) ConfigMap(ctx context.Context, ns, name string) (map[string]string, map[string]string, bool, error) {
	cm, err := in.core.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, false, ignoreNotFound(err)
	}
	return cm.Data, cm.Labels, true, nil
}

func (in *realInside) DeleteConfigMap(ctx context.Context, ns, name string) error {
	return in.core.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
}

func (in *realInside) OIDC(ctx context.Context) ([]runtimeconfig.ObservedOIDC, error) {
	list, err := in.dynamic.Resource(kube.OpenIDConnectResource).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // not served: there are none
	}
	if err != nil {
		return nil, err
	}
	var out []runtimeconfig.ObservedOIDC
	for i := range list.Items {
		out = append(out, kube.ObserveOIDC(&list.Items[i]))
	}
	return out, nil
}

func (in *realInside) PutOIDC(ctx context.Context, o runtimeconfig.ObservedOIDC) error {
	u := kube.OIDCObject(o.OIDCResource)
	if !o.Managed {
		u.SetLabels(nil)
	}
	_, err := in.dynamic.Resource(kube.OpenIDConnectResource).Create(ctx, u, metav1.CreateOptions{})
	return err
}

func (in *realInside) DeleteOIDC(ctx context.Context, name string) error {
	return in.dynamic.Resource(kube.OpenIDConnectResource).Delete(ctx, name, metav1.DeleteOptions{})
}

func (in *realInside) Bindings(ctx context.Context) ([]runtimeconfig.ObservedBinding, error) {
	list, err := in.core.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []runtimeconfig.ObservedBinding
	for i := range list.Items {
		out = append(out, kube.ObserveBinding(&list.Items[i]))
	}
	return out, nil
}

func (in *realInside) PutBinding(ctx context.Context, b runtimeconfig.ObservedBinding) error {
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: b.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: b.RoleKind, Name: b.RoleName}}
	if b.Managed {
		crb.Labels = map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}
	}
	for _, s := range b.Subjects {
		crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: s.Kind, APIGroup: s.APIGroup, Name: s.Name, Namespace: s.Namespace})
	}
	_, err := in.core.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
	return err
}

func (in *realInside) DeleteBinding(ctx context.Context, name string) error {
	return in.core.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
}

func (in *realInside) BootstrapObject(ctx context.Context, kind, ns, name string) (bool, error) {
	var err error
	switch kind {
	case "ConfigMap":
		_, err = in.core.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	case "Deployment":
		_, err = in.core.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	case "Namespace":
		_, err = in.core.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	case "ClusterRoleBinding":
		_, err = in.core.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
	case "Secret":
		_, err = in.core.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	default:
		return false, fmt.Errorf("kind %s not supported by the test", kind)
	}
	return err == nil, ignoreNotFound(err)
}

func (in *realInside) ReplaceBootstrapObject(ctx context.Context, kind, ns, name string) error {
	if kind != "ConfigMap" {
		return fmt.Errorf("kind %s not supported by the test", kind)
	}
	if err := in.core.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
		return err
	}
	_, err := in.core.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{"owner": "customer"}}, Data: map[string]string{"mine": "yes"}}, metav1.CreateOptions{})
	return err
}

func (in *realInside) PullSecret(ctx context.Context, ns, name string) (bool, error) {
	_, err := in.core.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	return err == nil, ignoreNotFound(err)
}

// SetDeploymentAvailable plays the kube-controller-manager, which envtest does not run.
func (in *realInside) SetDeploymentAvailable(ctx context.Context, ns, name string) error {
	d, err := in.core.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	d.Status.ObservedGeneration = d.Generation
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: "MinimumReplicasAvailable", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	_, err = in.core.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

func (in *realInside) Hang(context.Context) (func(), error) {
	resume, err := in.r.pool.Pause(in.key)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { _ = resume() }) }, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// contractRuntime is a runtime without customer issuers with the given administrators.
func contractRuntime(id string, admins []string) shoot.Runtime {
	return shoot.Runtime{ID: id, Name: "c-" + id, Region: "eu-central-1", Provider: shoot.AWS, OIDCGiven: true, OIDC: []shoot.OIDC{},
		Administrators: admins, Workers: []shoot.Worker{{Name: "cpu-worker-0", MachineType: "m6i.large", Minimum: 1, Maximum: 1}}}
}
