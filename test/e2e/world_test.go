package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// kcpNamespace is where KEB creates Runtimes.
const kcpNamespace = keb.Namespace

// The garden-in-a-box runs once per test binary; testenv.Main stops it.
func TestMain(m *testing.M) { testenv.Main(m) }

// world is one garden-in-a-box with the operator's view of it.
type world struct {
	env    *gardenbox.Env
	kcp    client.Client
	garden client.Client
	// shootConfig is what the operator generates shoots with (the golden configuration).
	shootConfig shoot.Config
	// project is the Gardener project of the golden configuration and of the sandbox catalogue.
	project string
	// operatorView reads through the cache of the running operator: what its reconcilers see.
	operatorView client.Reader
	// runtimeSection is the runtime section of the operator configurations written (nil: the golden file's).
	runtimeSection map[string]any
}

// worldOptions tune the environment for a test.
type worldOptions struct {
	runtimeAPIServers runtimeapi.Mode
	gardenlet         gardenlet.Options
}

// theWorld is the one garden-in-a-box of this package: the in-process gardener-apiserver starts once per process,
// so every test of the package asks for the same (a test asking for others would fail, garden.Shared). A runtime
// API server per shoot; reconciles take long enough that "left Ready before Gardener finished" is observable, short
// enough for a quick test.
var theWorld = worldOptions{
	runtimeAPIServers: runtimeapi.ModePerShoot,
	gardenlet: gardenlet.Options{CreateDuration: 2 * time.Second, ReconcileDuration: 3 * time.Second,
		DeleteDuration: time.Second, ProgressInterval: 500 * time.Millisecond},
}

// startWorld returns the garden-in-a-box with the catalogue the golden runtimes need and the KCP namespace.
func startWorld(t testing.TB, o worldOptions) *world {
	t.Helper()
	env := testenv.Garden(t, testenv.GardenOptions{RuntimeAPIServers: o.runtimeAPIServers, Gardenlet: o.gardenlet})
	cfg, err := config.Load(testenv.GoldenConfig())
	if err != nil {
		t.Fatal(err)
	}
	// catalogue.Default() offers what the golden runtimes reference (bindings, images, Secrets, audit policy).
	if env.Catalogue.Project != cfg.Gardener.Project {
		t.Fatalf("the golden configuration names project %q, the sandbox catalogue %q", cfg.Gardener.Project, env.Catalogue.Project)
	}
	w := &world{env: env, kcp: env.KCPClient, garden: env.GardenClient, shootConfig: cfg.ShootConfig(), project: cfg.Gardener.Project}
	err = w.kcp.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return w
}

// writeConfig writes an operator configuration: the golden one with the given deletion section.
func (w *world) writeConfig(t testing.TB, _ string, deletion map[string]any) string {
	sections := map[string]any{"deletion": deletion}
	if w.runtimeSection != nil {
		sections["runtime"] = w.runtimeSection
	}
	return testenv.WriteConfigWith(t, sections)
}

// startOperator runs the real manager with every controller until the returned stop is called (or the test ends).
func (w *world) startOperator(t testing.TB, configFile string) (stop func()) {
	t.Helper()
	opts := testenv.Options(w.project)
	opts.ConfigFile = configFile
	op := testenv.RunOperator(t, w.env.KCP, w.env.Garden, opts)
	w.operatorView = op.Manager.GetClient()
	return func() {
		if err := op.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	}
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
	return testenv.UpdateRuntime(t, w.kcp, client.ObjectKey{Namespace: kcpNamespace, Name: name}, change)
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
	testenv.Eventually(t, timeout, "runtime "+name+" Ready", func() (bool, string) {
		rt = w.runtime(t, name)
		return rt != nil && rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation, describe(rt)
	})
	return rt
}

// kubeconfig returns the content of the Runtime's kubeconfig Secret (nil when the Secret does not exist).
func (w *world) kubeconfig(t testing.TB, runtimeID string) []byte {
	t.Helper()
	s := &corev1.Secret{}
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: kubeconfig.SecretName(runtimeID)}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[kubeconfig.SecretKey]
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
