package admission_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// Issue 26: KEB counts nothing (administrators, pools, issuers, ACL entries, pool labels and taints), sends an empty
// kubernetes.version when its own default is unset and dualStack: true wherever it offers it. A Runtime it builds is
// refused only after a short retry, and then the provisioning fails; so every such Runtime must be admitted.

func manyPools(t *testing.T, base *unstructured.Unstructured, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = workerCopy(t, base, fmt.Sprintf("pool-%d", i), nil)
	}
	return out
}

func manyIssuers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"clientID": fmt.Sprintf("client-%d", i), "issuerURL": fmt.Sprintf("https://issuer-%d.example.com", i),
			"usernameClaim": "sub", "usernamePrefix": "-", "groupsClaim": "groups", "groupsPrefix": "-", "signingAlgs": []any{"RS256"}}
	}
	return out
}

func manyCIDRs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
	}
	return out
}

// goldenRuntimes are the Runtimes of the golden shoots (one per provider and feature) and the trial fixture.
func goldenRuntimes(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	files, _ := filepath.Glob("../../adapters/gardener/testdata/runtimes/*.yaml")
	for name, doc := range runtimeFixtures(t) {
		out[filepath.Base(name)] = toUnstructured(t, doc)
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = toUnstructured(t, doc)
	}
	if len(files) < 10 {
		t.Fatalf("found %d golden Runtimes, want the set of adapters/gardener/testdata/runtimes", len(files))
	}
	return out
}

// atKEBsBounds turns a Runtime into one with as much input as KEB may send: the numbers the issue names, empty and
// reserved administrator names, an empty version, dual-stack, a pool with many labels and taints.
func atKEBsBounds(t *testing.T, rt *unstructured.Unstructured) {
	admins := manyStrings(998)
	admins = append(admins, "", "system:anonymous")
	set("spec.security.administrators", admins)(rt.Object)
	set("spec.shoot.kubernetes.version", "")(rt.Object)
	set("spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", manyIssuers(100))(rt.Object)
	set("spec.shoot.kubernetes.kubeAPIServer.acl", map[string]any{"allowedCIDRs": manyCIDRs(1000)})(rt.Object)
	set("spec.shoot.networking.dualStack", true)(rt.Object)
	pools := manyPools(t, rt, 100)
	pools[0].(map[string]any)["labels"] = manyLabels(200)
	pools[0].(map[string]any)["annotations"] = manyLabels(200)
	pools[0].(map[string]any)["taints"] = manyTaints(100)
	set("spec.shoot.provider.additionalWorkers", pools)(rt.Object)
}

func TestIntegrationKEBRuntimesAtTheBoundsAreAccepted(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	i := 0
	for name, rt := range goldenRuntimes(t) {
		i++
		t.Run(name, func(t *testing.T) {
			rt.SetNamespace(api.ns)
			rt.SetName(fmt.Sprintf("5e1d0c2a-be4c-4000-8000-%012x", i))
			atKEBsBounds(t, rt)
			//nolint:staticcheck // the patch form carries the field validation (see TestIntegrationKEBRuntimeIsAcceptedUnchanged)
			if err := api.client.Patch(ctx, rt.DeepCopy(), client.Apply, client.FieldOwner("keb"), client.ForceOwnership); err != nil {
				t.Fatalf("server-side apply of %s at KEB's bounds was rejected: %v", name, err)
			}
			// Then what KEB does on every later change: a typed Update of the whole object with new labels.
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(rt.GroupVersionKind())
			if err := api.client.Get(ctx, client.ObjectKeyFromObject(rt), got); err != nil {
				t.Fatal(err)
			}
			labels := got.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["kyma-project.io/broker-plan-name"] = "relabelled"
			got.SetLabels(labels)
			if err := api.client.Update(ctx, got); err != nil {
				t.Fatalf("label update of %s was rejected: %v", name, err)
			}
		})
	}
}

// relaxedRuntimeCRD is our Runtime CRD with only the checks the previous manager's CRD had (PEERS.md §4: the
// provider type enum, the quantity patterns of Gardener's Worker, required fields): the schema under which
// the Runtimes of today's landscapes were stored.
func relaxedRuntimeCRD(t *testing.T, crd map[string]any) {
	t.Helper()
	var relax func(node any, path string)
	relax = func(node any, path string) {
		switch n := node.(type) {
		case map[string]any:
			for _, k := range []string{"x-kubernetes-validations", "maxItems", "minItems", "maxLength", "minLength"} {
				delete(n, k)
			}
			if _, ok := n["enum"]; ok && path != ".spec.shoot.provider.type" {
				delete(n, "enum")
			}
			if _, ok := n["pattern"]; ok && !strings.Contains(path, "orkers") {
				delete(n, "pattern")
			}
			if props, ok := n["properties"].(map[string]any); ok {
				for k, v := range props {
					relax(v, path+"."+k)
				}
			}
			if items, ok := n["items"]; ok {
				relax(items, path+"[]")
			}
		}
	}
	versions := crd["spec"].(map[string]any)["versions"].([]any)
	for _, v := range versions {
		relax(v.(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"], "")
	}
}

func TestIntegrationRuntimesStoredUnderThePreviousCRDStayWritable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a kube-apiserver (run without -short)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the envtest binaries)")
	}
	ours, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "infrastructuremanager.kyma-project.io_runtimes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	relaxed := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(ours, &relaxed.Object); err != nil {
		t.Fatal(err)
	}
	relaxedRuntimeCRD(t, relaxed.Object)
	dir := t.TempDir()
	raw, err := yaml.Marshal(relaxed.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runtimes.yaml"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{dir}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("kcp-system")
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	base := toUnstructured(t, runtimeFixtures(t)["../../operator/api/v1/testdata/keb-runtime-trial.yaml"])
	base.SetNamespace("kcp-system")
	// Values our rules refuse that the previous CRD let through, each stored in one Runtime.
	stored := map[string]mutation{
		"pool minimum above maximum":            set("spec.shoot.provider.workers[0].minimum", int64(3)),
		"maxSurge and maxUnavailable both zero": set("spec.shoot.provider.workers[0].maxSurge", int64(0)),
		"ACL entry that is not a CIDR":          set("spec.shoot.kubernetes.kubeAPIServer.acl", map[string]any{"allowedCIDRs": []any{"1.2.3.4"}}),
		"purpose infrastructure":                set("spec.shoot.purpose", "infrastructure"),
		"issuer over plain http": set("spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig",
			[]any{map[string]any{"clientID": "x", "issuerURL": "http://issuer.example.com"}}),
		"unknown failure tolerance":               set("spec.shoot.controlPlane", map[string]any{"highAvailability": map[string]any{"failureTolerance": map[string]any{"type": "region"}}}),
		"unknown network type":                    set("spec.shoot.networking.type", "flannel"),
		"registry cache without upstream":         set("spec.imageRegistryCache", []any{map[string]any{"name": "docker", "namespace": "default", "uid": "u1", "config": map[string]any{"upstream": "", "http": map[string]any{}}}}),
		"additional pool named as the main pool":  set("spec.shoot.provider.additionalWorkers", []any{workerCopy(t, base, "cpu-worker-0", nil)}),
		"kubernetes version that is not one":      set("spec.shoot.kubernetes.version", "latest"),
		"pods CIDR with a prefix beyond 32 bits":  set("spec.shoot.networking.pods", "10.96.0.0/33"),
		"registry cache http without tls (valid)": set("spec.imageRegistryCache", []any{map[string]any{"name": "docker", "namespace": "default", "uid": "u1", "config": map[string]any{"upstream": "docker.io", "http": map[string]any{}}}}),
	}
	names := map[string]string{}
	i := 0
	for reason, mutate := range stored {
		i++
		obj := base.DeepCopy()
		obj.SetName(fmt.Sprintf("5e1d0c2a-be4c-4000-8000-%012x", i))
		mutate(obj.Object)
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("%s: the previous schema refused the Runtime: %v", reason, err)
		}
		names[reason] = obj.GetName()
	}

	// The upgrade: our CRD over the stored objects.
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := c.Get(ctx, client.ObjectKey{Name: relaxed.GetName()}, crd); err != nil {
		t.Fatal(err)
	}
	upgraded := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(ours, &upgraded.Object); err != nil {
		t.Fatal(err)
	}
	upgraded.SetResourceVersion(crd.GetResourceVersion())
	if err := c.Update(ctx, upgraded); err != nil {
		t.Fatalf("install our CRD over the previous one: %v", err)
	}
	// The API server serves the new schema once its CRD handler has picked it up: a document the new rules refuse
	// is then refused on Create.
	probe := base.DeepCopy()
	probe.SetName("5e1d0c2a-be4c-4000-8000-ffffffffffff")
	set("spec.shoot.networking.type", "flannel")(probe.Object)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(ctx, probe.DeepCopy())
		if apierrors.IsInvalid(err) {
			break
		}
		if err == nil {
			if err := c.Delete(ctx, probe.DeepCopy()); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upgraded CRD does not refuse an unknown network type after 30s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	for reason, name := range names {
		t.Run(reason, func(t *testing.T) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(base.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKey{Namespace: "kcp-system", Name: name}, got); err != nil {
				t.Fatal(err)
			}
			// KEB: a typed Update of the whole object with changed labels.
			labels := got.GetLabels()
			labels["kyma-project.io/broker-plan-name"] = "relabelled"
			got.SetLabels(labels)
			if err := c.Update(ctx, got); err != nil {
				t.Fatalf("label update of a stored Runtime was rejected after the upgrade: %v", err)
			}
			// The operator: a finalizer and a status.
			got.SetFinalizers([]string{"runtime-controller.infrastructure-manager.kyma-project.io/deletion-hook"})
			if err := c.Update(ctx, got); err != nil {
				t.Fatalf("finalizer update was rejected: %v", err)
			}
			if err := unstructured.SetNestedField(got.Object, "Pending", "status", "state"); err != nil {
				t.Fatal(err)
			}
			if err := c.Status().Update(ctx, got); err != nil {
				t.Fatalf("status update was rejected: %v", err)
			}
		})
	}
	// The rules still hold for changes: a stored invalid value changed to another invalid one is refused.
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(base.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kcp-system", Name: names["unknown network type"]}, got); err != nil {
		t.Fatal(err)
	}
	set("spec.shoot.networking.type", "weave")(got.Object)
	if err := c.Update(ctx, got); !apierrors.IsInvalid(err) {
		t.Errorf("changing a stored invalid network type to another invalid one: %v, want Invalid", err)
	}
}
