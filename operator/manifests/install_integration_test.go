package manifests_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/operator/manifests"
)

const kcpNamespace = "kcp-system"

// warnings keeps every API warning (e.g. Pod Security violations of a Deployment's pod template).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// kcp is a real kube-apiserver + etcd standing in for the Kyma Control Plane.
type kcp struct {
	env      *envtest.Environment
	cfg      *rest.Config
	client   client.Client
	warnings *warnings
}

func startKCP(t *testing.T, configure func(*envtest.Environment)) *kcp {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs a kube-apiserver (run without -short)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the envtest binaries)")
	}
	env := &envtest.Environment{}
	if configure != nil {
		configure(env)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	w := &warnings{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &kcp{env: env, cfg: cfg, client: c, warnings: w}
}

func repoPath(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

// prometheusOperatorCRDs stands in for the Prometheus Operator, a prerequisite of the install: ServiceMonitor and
// PrometheusRule with an open schema, enough for the API server to store our objects.
func prometheusOperatorCRDs() []*apiextensionsv1.CustomResourceDefinition {
	open := true
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		plural := strings.ToLower(kind) + "s"
		crds = append(crds, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".monitoring.coreos.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: &open}}}},
			},
		})
	}
	return crds
}

// apply server-side applies the objects the way `kubectl apply --server-side -k` does: CRDs first (and waits until
// they are served), then everything else.
func (k *kcp) apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	for _, group := range [][]*unstructured.Unstructured{crds, rest} {
		for _, o := range group {
			if err := k.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		if len(group) > 0 && group[0].GetKind() == "CustomResourceDefinition" {
			k.waitEstablished(t, group)
		}
	}
}

func (k *kcp) waitEstablished(t *testing.T, crds []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range crds {
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := k.client.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
				return false, err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", u.GetName(), err)
		}
	}
	k.refresh(t)
}

// refresh replaces the client: its REST mapper learns new kinds lazily, a fresh client sees them at once.
func (k *kcp) refresh(t *testing.T) {
	t.Helper()
	c, err := client.New(k.cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k.client = c
}

// TestIntegrationInstallLeavesKCPNamespaceAlone installs config/default into a KCP whose kcp-system already exists
// with KEB's labels (restricted Pod Security among them), as `kubectl apply --server-side -k config/default` does,
// twice (an upgrade), and removes it again: the namespace keeps exactly its labels and annotations and survives the
// removal with what else lives in it. The restricted Pod Security admission raises no warning for the Deployment.
func TestIntegrationInstallLeavesKCPNamespaceAlone(t *testing.T) {
	k := startKCP(t, nil)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: kcpNamespace,
		Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/warn":    "restricted",
			"istio-injection":                    "enabled",
			"kyma-project.io/owner":              "keb",
		},
		Annotations: map[string]string{"kyma-project.io/description": "KEB's namespace"},
	}}
	if err := k.client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	before := &corev1.Namespace{}
	if err := k.client.Get(ctx, client.ObjectKey{Name: kcpNamespace}, before); err != nil {
		t.Fatal(err)
	}
	kebSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keb-owned", Namespace: kcpNamespace}, StringData: map[string]string{"k": "v"}}
	if err := k.client.Create(ctx, kebSecret); err != nil {
		t.Fatal(err)
	}
	for _, crd := range prometheusOperatorCRDs() {
		if err := k.client.Create(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}

	objs, err := manifests.Render(repoPath("config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			t.Fatalf("config/default contains Namespace %s: `kubectl delete -k` would delete it with every Runtime in it", o.GetName())
		}
		if ns := o.GetNamespace(); ns != "" && ns != kcpNamespace {
			t.Errorf("%s %s goes to namespace %s, not %s", o.GetKind(), o.GetName(), ns, kcpNamespace)
		}
	}
	k.warnings.take()
	k.apply(t, objs)
	k.apply(t, objs) // an upgrade re-applies the same objects
	for _, w := range k.warnings.take() {
		if strings.Contains(w, "PodSecurity") || strings.Contains(w, "restricted") {
			t.Errorf("the Deployment violates the restricted Pod Security Standard: %s", w)
		}
	}
	after := &corev1.Namespace{}
	if err := k.client.Get(ctx, client.ObjectKey{Name: kcpNamespace}, after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Labels, after.Labels); diff != "" {
		t.Errorf("installing changed the labels of %s (-before +after):\n%s", kcpNamespace, diff)
	}
	if diff := cmp.Diff(before.Annotations, after.Annotations); diff != "" {
		t.Errorf("installing changed the annotations of %s (-before +after):\n%s", kcpNamespace, diff)
	}
	for _, f := range after.ManagedFields {
		if f.Manager == "kubectl" {
			t.Errorf("the install took field ownership in namespace %s: %s", kcpNamespace, f.FieldsV1)
		}
	}

	t.Run("printer columns and the Ready condition", func(t *testing.T) { checkPrinterColumns(t, k) })
	t.Run("kstatus", func(t *testing.T) { checkKStatus(t, k) })
	t.Run("kstatus of GardenerClusters", func(t *testing.T) { checkGardenerClusterKStatus(t, k) })
	t.Run("the metrics scraper's permissions", func(t *testing.T) { checkScraper(t, k) })

	// `kubectl delete -k config/default`: every rendered object goes, the namespace and KEB's objects stay.
	for _, o := range objs {
		if err := client.IgnoreNotFound(k.client.Delete(ctx, o.DeepCopy())); err != nil {
			t.Fatalf("delete %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	gone := &corev1.Namespace{}
	if err := k.client.Get(ctx, client.ObjectKey{Name: kcpNamespace}, gone); err != nil {
		t.Fatalf("namespace %s after removing the operator: %v", kcpNamespace, err)
	}
	if gone.DeletionTimestamp != nil || !cmp.Equal(before.Labels, gone.Labels) {
		t.Errorf("namespace %s after removing the operator: deleting %v, labels %v", kcpNamespace, gone.DeletionTimestamp, gone.Labels)
	}
	if err := k.client.Get(ctx, client.ObjectKeyFromObject(kebSecret), &corev1.Secret{}); err != nil {
		t.Errorf("KEB's Secret after removing the operator: %v", err)
	}
}
