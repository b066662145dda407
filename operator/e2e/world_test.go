package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	runtimectrl "github.com/kyma-project/kim/operator/controllers/runtime"
	"github.com/kyma-project/kim/operator/mapping"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

const (
	// kcpNamespace is where KEB creates Runtimes.
	kcpNamespace = "kcp-system"
	// repoRoot is the repository root relative to this package.
	repoRoot = "../.."
	// goldenConfig is the operator configuration the golden shoots are generated with.
	goldenConfig = repoRoot + "/adapters/gardener/testdata/config.yaml"
)

// world is one garden-in-a-box with the operator's view of it.
type world struct {
	env    *gardenbox.Env
	kcp    client.Client
	garden client.Client
	// shootConfig is what the operator generates shoots with (the golden configuration).
	shootConfig shoot.Config
	// project is the Gardener project of the golden configuration and of the sandbox catalogue.
	project string
	// configDir holds the operator configuration files written for the test.
	configDir string
	// operatorView reads through the cache of the running operator: what its reconcilers see.
	operatorView client.Reader
}

// worldOptions tune the environment for a test.
type worldOptions struct {
	runtimeAPIServers runtimeapi.Mode
	gardenlet         gardenlet.Options
}

// startWorld starts garden-in-a-box with the catalogue the golden runtimes need and the KCP namespace.
func startWorld(t testing.TB, o worldOptions) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (KUBEBUILDER_ASSETS)")
	}
	if os.Getenv(gardenbox.EnvAssets) == "" {
		t.Fatalf("%s is not set: run `export %s=$(hack/envtest.sh)` or use `make test-integration`", gardenbox.EnvAssets, gardenbox.EnvAssets)
	}
	setupLogging()
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(goldenConfig)
	if err != nil {
		t.Fatal(err)
	}
	// catalogue.Default() offers what the golden runtimes reference (bindings, images, Secrets, audit policy).
	env, err := gardenbox.Start(context.Background(), gardenbox.Options{
		CRDDirectoryPaths: []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		KCPScheme:         scheme,
		Gardenlet:         o.gardenlet,
		RuntimeAPIServers: o.runtimeAPIServers,
		StartTimeout:      3 * time.Minute,
	})
	if errors.Is(err, gardenbox.ErrOncePerProcess) {
		// The lifecycle test and the benchmark need differently configured environments (runtime API server per
		// shoot vs. one shared server for fifty shoots); run the benchmark on its own (make bench-runtime).
		t.Skipf("garden-in-a-box already runs in this process with other options: %v", err)
	}
	if err != nil {
		t.Fatalf("start garden-in-a-box: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop garden-in-a-box: %v", err)
		}
	})
	t.Logf("garden-in-a-box started: %+v", env.StartupTimes)
	if env.Catalogue.Project != cfg.Gardener.Project {
		t.Fatalf("the golden configuration names project %q, the sandbox catalogue %q", cfg.Gardener.Project, env.Catalogue.Project)
	}
	w := &world{env: env, kcp: env.KCPClient, garden: env.GardenClient, configDir: t.TempDir(),
		shootConfig: cfg.ShootConfig(), project: cfg.Gardener.Project}
	if err := w.kcp.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		t.Fatal(err)
	}
	return w
}

var logOnce sync.Once

// setupLogging sends the operator's logs to $KIM_E2E_LOG (a file) when set, and discards them otherwise.
func setupLogging() {
	logOnce.Do(func() {
		path := os.Getenv("KIM_E2E_LOG")
		if path == "" {
			ctrl.SetLogger(zap.New(zap.WriteTo(discard{})))
			return
		}
		f, err := os.Create(path)
		if err != nil {
			ctrl.SetLogger(zap.New(zap.WriteTo(discard{})))
			return
		}
		ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// writeConfig writes an operator configuration: the golden one with the given deletion section.
func (w *world) writeConfig(t testing.TB, name string, deletion map[string]any) string {
	t.Helper()
	raw, err := os.ReadFile(goldenConfig)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["deletion"] = deletion
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.configDir, name+".yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startOperator runs the real manager with every registered controller until the returned stop is called (or the
// test ends). Controller name validation is skipped so a test can restart the operator in-process.
func (w *world) startOperator(t testing.TB, configFile string) (stop func()) {
	t.Helper()
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.GardenerProject = w.project
	opts.ConfigFile = configFile
	opts.GardenerQPS, opts.GardenerBurst = 500, 1000
	all := controllers.All()
	for _, c := range all {
		switch c := c.(type) {
		case *runtimectrl.Controller:
			c.SkipNameValidation = true
		case *gardenercluster.Controller:
			c.SkipNameValidation = true
		}
	}
	mgr, err := app.NewManager(w.env.KCP, w.env.Garden, opts, all...)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	w.operatorView = mgr.GetClient()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// loadRuntime reads a Runtime as KEB sends it.
func loadRuntime(t testing.TB, path string) *imv1.Runtime {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rt.Generation = 0
	rt.Namespace = kcpNamespace
	return rt
}

// goldenRuntime loads adapters/gardener/testdata/runtimes/<name>.yaml.
func goldenRuntime(t testing.TB, name string) *imv1.Runtime {
	return loadRuntime(t, filepath.Join(repoRoot, "adapters", "gardener", "testdata", "runtimes", name+".yaml"))
}

// withIdentity returns a copy of rt with another runtime ID and shoot name, as KEB would send for another instance.
func withIdentity(rt *imv1.Runtime, runtimeID, shootName string) *imv1.Runtime {
	out := rt.DeepCopy()
	out.Name = runtimeID
	out.Labels = map[string]string{}
	for k, v := range rt.Labels {
		out.Labels[k] = v
	}
	out.Labels[imv1.LabelRuntimeID] = runtimeID
	out.Labels["operator.kyma-project.io/kyma-name"] = runtimeID
	if shootName != "" {
		out.Spec.Shoot.Name = shootName
		out.Labels["kyma-project.io/shoot-name"] = shootName
	}
	return out
}

// runtime reads a Runtime from the API server (nil when it does not exist).
func (w *world) runtime(t testing.TB, name string) *imv1.Runtime {
	t.Helper()
	rt := &imv1.Runtime{}
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, rt)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get runtime %s: %v", name, err)
	}
	return rt
}

// shoot reads a shoot from the garden (nil when it does not exist).
func (w *world) shoot(t testing.TB, name string) *gardencorev1beta1.Shoot {
	t.Helper()
	s := &gardencorev1beta1.Shoot{}
	err := w.garden.Get(context.Background(), client.ObjectKey{Namespace: "garden-" + w.project, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get shoot %s: %v", name, err)
	}
	return s
}

// patchShoot applies change to the shoot as another field manager would (a person or the test) and returns the
// shoot as the API server stored it.
func (w *world) patchShoot(t testing.TB, name string, change func(*gardencorev1beta1.Shoot)) *gardencorev1beta1.Shoot {
	t.Helper()
	s := w.shoot(t, name)
	if s == nil {
		t.Fatalf("shoot %s does not exist", name)
	}
	patch := client.MergeFrom(s.DeepCopy())
	change(s)
	if err := w.garden.Patch(context.Background(), s, patch); err != nil {
		t.Fatalf("patch shoot %s: %v", name, err)
	}
	return s
}

// updateRuntime changes the spec of a Runtime the way KEB does (whole object, retried on conflicts) and returns
// the new generation.
func (w *world) updateRuntime(t testing.TB, name string, change func(*imv1.Runtime)) int64 {
	t.Helper()
	for range 10 {
		rt := w.runtime(t, name)
		if rt == nil {
			t.Fatalf("runtime %s does not exist", name)
		}
		change(rt)
		err := w.kcp.Update(context.Background(), rt)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("update runtime %s: %v", name, err)
		}
		return rt.Generation
	}
	t.Fatalf("update runtime %s: too many conflicts", name)
	return 0
}

// readyCondition returns the Ready condition (zero value if none).
func readyCondition(rt *imv1.Runtime) metav1.Condition {
	if c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func describe(rt *imv1.Runtime) string {
	if rt == nil {
		return "NotFound"
	}
	c := readyCondition(rt)
	return fmt.Sprintf("%s (generation %d, observed %d) %s: %s", rt.Status.State, rt.Generation, rt.Status.ObservedGeneration, c.Reason, c.Message)
}

// eventually polls cond until it returns true, failing the test after timeout with cond's last description.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scenario is a named subtest.
type scenario struct {
	name string
	run  func(t *testing.T)
}

// concurrently runs the scenarios as subtests of t at the same time. Unlike t.Parallel it is not bounded by
// -parallel (GOMAXPROCS by default, two on the CI machines), which matters because the scenarios mostly wait for
// the simulated Gardener and the operator's backoffs and windows.
func concurrently(t *testing.T, scenarios ...scenario) {
	var wg sync.WaitGroup
	for _, s := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(s.name, s.run)
		}()
	}
	wg.Wait()
}

// waitReady waits until the Runtime is Ready for its current generation.
func (w *world) waitReady(t testing.TB, name string, timeout time.Duration) *imv1.Runtime {
	t.Helper()
	var rt *imv1.Runtime
	eventually(t, timeout, "runtime "+name+" Ready", func() (bool, string) {
		rt = w.runtime(t, name)
		return rt != nil && rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation, describe(rt)
	})
	return rt
}

// kubeconfig returns the content of the Runtime's kubeconfig Secret (nil when the Secret does not exist).
func (w *world) kubeconfig(t testing.TB, runtimeID string) []byte {
	t.Helper()
	s := &corev1.Secret{}
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: kube.SecretName(runtimeID)}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[kube.SecretKey]
}

// gardenerClusterExists tells whether the GardenerCluster of the runtime exists.
func (w *world) gardenerClusterExists(t testing.TB, runtimeID string) bool {
	t.Helper()
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: runtimeID}, &imv1.GardenerCluster{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// checkKubeconfigWorks uses the kubeconfig from the Secret against the runtime API server and returns the CA it
// trusts (to tell clusters apart).
func checkKubeconfigWorks(t testing.TB, kubeconfig []byte) []byte {
	t.Helper()
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig does not parse: %v", err)
	}
	cur := kc.Contexts[kc.CurrentContext]
	if kc.CurrentContext == "" || cur == nil || kc.Clusters[cur.Cluster] == nil ||
		len(kc.Clusters[cur.Cluster].CertificateAuthorityData) == 0 || kc.Clusters[cur.Cluster].Server == "" {
		t.Fatalf("kubeconfig lacks current-context, server or CA data (docs/keb-contract.md)")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubeconfig does not authenticate at the runtime API server: %v", err)
	}
	return kc.Clusters[cur.Cluster].CertificateAuthorityData
}

// runtimeAdmin is an admin client of the runtime API server behind a shoot (from the sandbox, not the operator).
func (w *world) runtimeAdmin(t testing.TB, shootName string) client.Client {
	t.Helper()
	cfg, err := w.env.Runtimes.AdminConfig("garden-" + w.project + "/" + shootName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rest.CopyConfig(cfg), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkAdminBindings asserts that every administrator is bound to cluster-admin in the runtime and that no other
// binding of the operator exists there.
func (w *world) checkAdminBindings(t testing.TB, shootName string, admins []string) {
	t.Helper()
	c := w.runtimeAdmin(t, shootName)
	var list rbacv1.ClusterRoleBindingList
	if err := c.List(context.Background(), &list, client.MatchingLabels{kube.LabelAdminBinding: kube.AdminBindingValue}); err != nil {
		t.Fatalf("list admin bindings in runtime %s: %v", shootName, err)
	}
	got := map[string]string{}
	for _, b := range list.Items {
		if b.RoleRef.Name != "cluster-admin" || len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.UserKind {
			t.Errorf("binding %s in runtime %s: role %s, subjects %+v", b.Name, shootName, b.RoleRef.Name, b.Subjects)
			continue
		}
		got[b.Subjects[0].Name] = b.Name
	}
	if len(got) != len(admins) {
		t.Errorf("runtime %s has admin bindings for %v, want exactly %v", shootName, keys(got), admins)
	}
	for _, a := range admins {
		if got[a] != kube.AdminBindingName(a) {
			t.Errorf("runtime %s: no ClusterRoleBinding %s for administrator %s (have %v)", shootName, kube.AdminBindingName(a), a, got)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkShootMatchesGenerated compares the shoot in the garden with the shoot the operator generates for rt (the
// golden output for golden runtimes): every field of the generated shoot must be in the garden's shoot with the same
// value. The gardener-apiserver adds defaults, and completes a major.minor Kubernetes version to a patch version.
func (w *world) checkShootMatchesGenerated(t testing.TB, rt *imv1.Runtime) {
	t.Helper()
	spec, err := shoot.Generate(mapping.Runtime(rt), w.shootConfig)
	if err != nil {
		t.Fatalf("generate shoot of %s: %v", rt.Name, err)
	}
	want, err := gardener.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := w.shoot(t, rt.Spec.Shoot.Name)
	if got == nil {
		t.Fatalf("shoot %s does not exist", rt.Spec.Shoot.Name)
	}
	wantMeta := metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace, Labels: want.Labels, Annotations: want.Annotations}
	wantDoc := map[string]any{"metadata": toMap(t, wantMeta), "spec": toMap(t, want.Spec)}
	gotDoc := map[string]any{"metadata": toMap(t, got.ObjectMeta), "spec": toMap(t, got.Spec)}
	for _, d := range subsetDiff("", wantDoc, gotDoc) {
		t.Errorf("shoot %s differs from the generated spec: %s", got.Name, d)
	}
}

func toMap(t testing.TB, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// subsetDiff lists the places where want is not contained in got.
func subsetDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, subsetDiff(path+"."+k, v, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d elements %v, got %v", path, len(w), w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if path == ".spec.kubernetes.version" {
		if ws, gs := fmt.Sprint(want), fmt.Sprint(got); gs == ws || strings.HasPrefix(gs, ws+".") {
			return nil
		}
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

// workerPools returns the names of the shoot's worker pools.
func workerPools(s *gardencorev1beta1.Shoot) []string {
	var out []string
	for _, w := range s.Spec.Provider.Workers {
		out = append(out, w.Name)
	}
	return out
}

func worker(s *gardencorev1beta1.Shoot, name string) *gardencorev1beta1.Worker {
	for i := range s.Spec.Provider.Workers {
		if s.Spec.Provider.Workers[i].Name == name {
			return &s.Spec.Provider.Workers[i]
		}
	}
	return nil
}
