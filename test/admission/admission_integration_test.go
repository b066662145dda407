// Package admission_test checks the admission rules of the generated CRDs (config/crd/bases) against a real
// kube-apiserver. It lives outside operator/api so the API module keeps no test dependencies (envtest,
// controller-runtime) that importers would inherit.
package admission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// warningRecorder keeps every API warning so a test can assert there were none.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.warnings
	w.warnings = nil
	return out
}

type apiServer struct {
	client   client.Client
	warnings *warningRecorder
	// cfg is the admin config (for clients acting as someone else).
	cfg *rest.Config
	// ns is the namespace the test's objects go to: its own on the shared server, kcp-system on a server of its own.
	ns string
}

// shared is the kube-apiserver the tests of the CRDs' rules share: the first of them starts it, TestMain stops it.
// Each test gets a namespace of its own there; the rules they judge are the same for every test.
var shared struct {
	mu   sync.Mutex
	env  *envtest.Environment
	cfg  *rest.Config
	err  error
	next int
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the shared kube-apiserver:", err)
			code = 1
		}
	}
	shared.mu.Unlock()
	os.Exit(code)
}

// startAPIServer returns a client of the package's shared kube-apiserver (real, with our generated CRDs installed)
// and a namespace of the test's own on it. A test that installs anything cluster-wide (an admission policy, RBAC)
// would change what the others see: it starts a server of its own with startOwnAPIServer.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	requireAssets(t)
	shared.mu.Lock()
	if shared.env == nil && shared.err == nil {
		shared.env = crdEnvironment()
		shared.cfg, shared.err = shared.env.Start()
		if shared.err != nil {
			shared.env = nil
		}
	}
	cfg, err := shared.cfg, shared.err
	shared.next++
	ns := fmt.Sprintf("admission-%d", shared.next)
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	return connect(t, cfg, ns)
}

// startOwnAPIServer starts a kube-apiserver and etcd with our generated CRDs installed for this test alone, its
// objects in kcp-system (the namespace the admission policies name).
func startOwnAPIServer(t *testing.T) *apiServer {
	t.Helper()
	requireAssets(t)
	env := crdEnvironment()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	return connect(t, cfg, "kcp-system")
}

func requireAssets(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs a kube-apiserver (run without -short)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the envtest binaries)")
	}
}

func crdEnvironment() *envtest.Environment {
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
}

// connect makes the test's admin client, with a warning recorder of its own, and creates the namespace ns.
func connect(t *testing.T, admin *rest.Config, ns string) *apiServer {
	t.Helper()
	rec := &warningRecorder{}
	cfg := rest.CopyConfig(admin)
	cfg.WarningHandler = rec
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("Namespace")
	obj.SetName(ns)
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return &apiServer{client: c, warnings: rec, cfg: cfg, ns: ns}
}

// runtimeFixtures returns the KEB-shaped Runtime documents: ours in operator/api/v1/testdata and, when the shared design folder is
// beside the clone (as in CI), every Runtime fixture there too.
func runtimeFixtures(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pattern := range []string{"../../operator/api/v1/testdata/*.yaml", "../../../shared/fixtures/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			if !strings.Contains(string(data), "kind: Runtime") {
				continue
			}
			out[f] = data
		}
	}
	if len(out) == 0 {
		t.Fatal("no Runtime fixtures found")
	}
	return out
}

func toUnstructured(t *testing.T, doc []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		t.Fatalf("parse fixture: %v", err)
	}
	return u
}

// canonical renders a value as JSON with sorted keys and float numbers, so documents that went through
// different decoders compare equal when they carry the same data.
func canonical(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(generic, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestIntegrationKEBRuntimeIsAcceptedUnchanged(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	for name, doc := range runtimeFixtures(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			in := toUnstructured(t, doc)
			in.SetNamespace(api.ns)
			want := in.DeepCopy()
			// client.Client.Apply has no field-validation option; the contract is about Strict, so use the patch form.
			err := api.client.Patch(ctx, in, client.Apply, client.FieldOwner("keb"), client.ForceOwnership, //nolint:staticcheck // see above
				client.FieldValidation(metav1.FieldValidationStrict))
			if err != nil {
				t.Fatalf("server-side apply of %s was rejected: %v", name, err)
			}
			if w := api.warnings.take(); len(w) > 0 {
				t.Errorf("the API server warned about %s: %q", name, w)
			}
			got := readBackSameSpec(ctx, t, api, want)
			if w, g := canonical(t, want.GetLabels()), canonical(t, got.GetLabels()); w != g {
				t.Errorf("labels changed:\nsent %s\nread %s", w, g)
			}
		})
	}
}

// readBackSameSpec reads the stored object of sent and fails the test when its spec is not the one sent (pruned or
// defaulted by the API server).
func readBackSameSpec(ctx context.Context, t *testing.T, api *apiServer, sent *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(sent.GroupVersionKind())
	if err := api.client.Get(ctx, client.ObjectKeyFromObject(sent), got); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if w, g := canonical(t, sent.Object["spec"]), canonical(t, got.Object["spec"]); w != g {
		t.Errorf("spec changed on the way through the API server (pruned or defaulted):\nsent %s\nread %s", w, g)
	}
	return got
}

// trialRuntime is KEB's trial Runtime fixture in the test's namespace.
func trialRuntime(t *testing.T, api *apiServer) *unstructured.Unstructured {
	t.Helper()
	base := toUnstructured(t, runtimeFixtures(t)["../../operator/api/v1/testdata/keb-runtime-trial.yaml"])
	base.SetNamespace(api.ns)
	return base
}

// TestIntegrationPoolsWithoutZonesAreAccepted: KEB sends a pool without zones when its providers configuration lists
// none for the region (docs/keb-contract.md); the operator fills them from the cloud profile, so admission takes the
// Runtime as it is, the zones neither refused nor defaulted.
func TestIntegrationPoolsWithoutZonesAreAccepted(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	base := trialRuntime(t, api)
	for i, tc := range []struct {
		name   string
		mutate mutation
	}{
		// KEB's omitempty drops the empty list: the field is absent.
		{"main pool without the zones field", func(o map[string]any) {
			delete(o["spec"].(map[string]any)["shoot"].(map[string]any)["provider"].(map[string]any)["workers"].([]any)[0].(map[string]any), "zones")
		}},
		{"main pool with an empty zones list", set("spec.shoot.provider.workers[0].zones", []any{})},
		{"additional pool without zones", set("spec.shoot.provider.additionalWorkers",
			[]any{workerCopy(t, base, "big", func(w map[string]any) { delete(w, "zones") })})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := base.DeepCopy()
			obj.SetName(fmt.Sprintf("20e5a0c1-0000-4000-8000-%012d", i))
			tc.mutate(obj.Object)
			sent := obj.DeepCopy() // Create overwrites obj with what the API server stored
			if err := api.client.Create(ctx, obj); err != nil {
				t.Fatalf("a Runtime whose pool has no zones was refused: %v", err)
			}
			readBackSameSpec(ctx, t, api, sent)
		})
	}
}

// mutation changes a valid document into an invalid one.
type mutation func(obj map[string]any)

func set(path string, value any) mutation {
	return func(obj map[string]any) {
		keys := strings.Split(path, ".")
		cur := obj
		for _, k := range keys[:len(keys)-1] {
			cur = descend(cur, k)
		}
		cur[keys[len(keys)-1]] = value
	}
}

func remove(path string) mutation {
	return func(obj map[string]any) {
		keys := strings.Split(path, ".")
		cur := obj
		for _, k := range keys[:len(keys)-1] {
			cur = descend(cur, k)
		}
		delete(cur, keys[len(keys)-1])
	}
}

// descend follows a key; "workers[0]" style keys index into lists.
func descend(cur map[string]any, key string) map[string]any {
	if i := strings.Index(key, "["); i > 0 {
		list := cur[key[:i]].([]any)
		return list[int(key[i+1]-'0')].(map[string]any)
	}
	next, ok := cur[key].(map[string]any)
	if !ok {
		next = map[string]any{}
		cur[key] = next
	}
	return next
}

func workerCopy(t *testing.T, base *unstructured.Unstructured, name string, edit func(w map[string]any)) map[string]any {
	t.Helper()
	workers, _, _ := unstructured.NestedSlice(base.Object, "spec", "shoot", "provider", "workers")
	w := workers[0].(map[string]any)
	copied := (&unstructured.Unstructured{Object: w}).DeepCopy().Object
	copied["name"] = name
	if edit != nil {
		edit(copied)
	}
	return copied
}

func TestIntegrationInvalidDocumentsAreRejectedAtAdmission(t *testing.T) {
	api := startAPIServer(t)
	ctx := context.Background()
	base := trialRuntime(t, api)
	pool := func(name string, edit func(w map[string]any)) map[string]any { return workerCopy(t, base, name, edit) }

	cases := []struct {
		reason string
		mutate mutation
		// wantField is the field path the API server's message must name.
		wantField string
		// wantText is a part of our human message (empty where the schema's built-in message is clear enough).
		wantText string
	}{
		{"unknown provider type", set("spec.shoot.provider.type", "ibm"), "spec.shoot.provider.type", "supported values"},
		{"pods CIDR prefix too long", set("spec.shoot.networking.pods", "10.96.0.0/33"), "spec.shoot.networking.pods", "pods must be a CIDR"},
		{"nodes is not a CIDR", set("spec.shoot.networking.nodes", "not-a-cidr"), "spec.shoot.networking.nodes", "nodes must be a CIDR"},
		{"services is an address, not a CIDR", set("spec.shoot.networking.services", "10.104.0.1"), "spec.shoot.networking.services", "services must be a CIDR"},
		{"ACL entry is not a CIDR", set("spec.shoot.kubernetes.kubeAPIServer.acl", map[string]any{"allowedCIDRs": []any{"10.0.0.0/8", "1.2.3.4"}}),
			"spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs[1]", "allowedCIDRs entry must be a CIDR"},
		{"worker minimum above maximum", set("spec.shoot.provider.workers[0].minimum", int64(3)), "spec.shoot.provider.workers", "minimum <= maximum"},
		{"maxSurge and maxUnavailable both zero", set("spec.shoot.provider.workers[0].maxSurge", int64(0)), "spec.shoot.provider.workers", "must not both be zero"},
		{"maxSurge and maxUnavailable both zero percent", func(o map[string]any) {
			set("spec.shoot.provider.workers[0].maxSurge", "0%")(o)
			set("spec.shoot.provider.workers[0].maxUnavailable", "0%")(o)
		}, "spec.shoot.provider.workers", "must not both be zero"},
		{"no worker pool", set("spec.shoot.provider.workers", []any{}), "spec.shoot.provider.workers", ""},
		{"two pools in workers", set("spec.shoot.provider.workers", []any{pool("cpu-worker-0", nil), pool("cpu-worker-1", nil)}), "spec.shoot.provider.workers", ""},
		{"additional pools share a name", set("spec.shoot.provider.additionalWorkers", []any{pool("gpu", nil), pool("gpu", nil)}),
			"spec.shoot.provider.additionalWorkers[1]", "Duplicate value"},
		{"additional pool minimum above maximum", set("spec.shoot.provider.additionalWorkers", []any{pool("big", func(w map[string]any) { w["minimum"] = int64(5) })}),
			"spec.shoot.provider.additionalWorkers", "minimum <= maximum"},
		{"shoot name with upper case", set("spec.shoot.name", "C-91F0E7A"), "spec.shoot.name", ""},
		{"shoot name longer than Gardener allows", set("spec.shoot.name", "a-very-long-shoot-name-x"), "spec.shoot.name", ""},
		{"shoot name with a double dash", set("spec.shoot.name", "c--91f0e7"), "spec.shoot.name", "must not contain '--'"},
		{"missing credentials binding", remove("spec.shoot.secretBindingName"), "spec.shoot.secretBindingName", ""},
		{"unknown purpose", set("spec.shoot.purpose", "fun"), "spec.shoot.purpose", "supported values"},
		{"kubernetes version is not a version", set("spec.shoot.kubernetes.version", "latest"), "spec.shoot.kubernetes.version", ""},
		{"OIDC issuer over plain http", set("spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", []any{map[string]any{"clientID": "x", "issuerURL": "http://issuer.example.com"}}),
			"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].issuerURL", "issuerURL must be an https:// URL"},
		{"unknown HA failure tolerance", set("spec.shoot.controlPlane", map[string]any{"highAvailability": map[string]any{"failureTolerance": map[string]any{"type": "region"}}}),
			"spec.shoot.controlPlane", "failureTolerance.type must be 'zone' or 'node'"},
		{"unknown network type", set("spec.shoot.networking.type", "flannel"), "spec.shoot.networking.type", "supported values"},
		{"missing region", remove("spec.shoot.region"), "spec.shoot.region", ""},
		{"missing security", remove("spec.security"), "spec.security", ""},
		// Admission holes of issue 12: bad input that passed the CRD and then looped in the controller.
		{"purpose Gardener allows only in the garden namespace", set("spec.shoot.purpose", "infrastructure"), "spec.shoot.purpose", "supported values"},
		// Far above what KEB sends (issue 26): the bounds the CEL cost budget or the work per runtime need.
		{"too many administrators", set("spec.security.administrators", manyStrings(1001)), "spec.security.administrators", ""},
		{"too many additional pools", set("spec.shoot.provider.additionalWorkers", manyPools(t, base, 101)), "spec.shoot.provider.additionalWorkers", ""},
		{"too many issuers", set("spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", manyIssuers(101)),
			"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", ""},
		{"too many ACL entries", set("spec.shoot.kubernetes.kubeAPIServer.acl", map[string]any{"allowedCIDRs": manyCIDRs(1001)}),
			"spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs", ""},
		{"registry cache without upstream", set("spec.imageRegistryCache", []any{map[string]any{"name": "docker", "config": map[string]any{"upstream": ""}}}),
			"spec.imageRegistryCache[0].config.upstream", ""},
	}
	for i, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			obj := base.DeepCopy()
			obj.SetName(strings.Replace(base.GetName(), "91b7c0de", "0000"+string(rune('a'+i%26))+"abc", 1))
			tc.mutate(obj.Object)
			err := api.client.Create(ctx, obj)
			assertRejected(t, err, tc.wantField, tc.wantText)
		})
	}
}
