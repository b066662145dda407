package selfservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

const (
	kcpNamespace = "kcp-system"
	repoRoot     = "../../.."
	goldenConfig = repoRoot + "/adapters/gardener/testdata/config.yaml"
	// testCRDs are the CRDs of APIs the operator uses but does not own (AuditLog, Kyma; RegistryCacheConfig for runtimes).
	testCRDs = repoRoot + "/adapters/kube/testdata/crds"
	// awsWindow is the deletion window of the aws plan here: short, so a tenant's release after it is observed.
	awsWindow = 20 * time.Second
	// provisionTimeout bounds a whole provisioning (runtime API servers start on busy machines).
	provisionTimeout = 4 * time.Minute
)

// world is one garden-in-a-box with the operator running, shared by the tests of the package.
type world struct {
	env     *gardenbox.Env
	kcp     client.Client
	garden  client.Client
	project string
	// logs holds everything the operator logged (checked for credentials).
	logs *syncBuffer
}

var (
	shared     *world
	sharedErr  error
	sharedOnce sync.Once
	stopShared func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	if stopShared != nil {
		stopShared()
	}
	os.Exit(code)
}

// startWorld starts garden-in-a-box and the operator once per process (the in-process gardener-apiserver can run
// only once) and returns it to every test.
func startWorld(t *testing.T) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (KUBEBUILDER_ASSETS)")
	}
	if os.Getenv(gardenbox.EnvAssets) == "" {
		t.Fatalf("%s is not set: run `export %s=$(hack/envtest.sh)` or use `make test-integration`", gardenbox.EnvAssets, gardenbox.EnvAssets)
	}
	sharedOnce.Do(func() { shared, sharedErr = newWorld() })
	if sharedErr != nil {
		t.Fatalf("start garden-in-a-box and the operator: %v", sharedErr)
	}
	return shared
}

func newWorld() (*world, error) {
	logs := &syncBuffer{}
	var out io.Writer = logs
	if path := os.Getenv("KIM_E2E_LOG"); path != "" {
		if f, err := os.Create(path); err == nil {
			out = io.MultiWriter(logs, f)
		}
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true)))
	scheme, err := app.NewScheme()
	if err != nil {
		return nil, err
	}
	env, err := gardenbox.Start(context.Background(), gardenbox.Options{
		CRDDirectoryPaths: []string{filepath.Join(repoRoot, "config", "crd", "bases"), filepath.Join(testCRDs, "kcp")},
		KCPScheme:         scheme,
		Gardenlet: gardenlet.Options{CreateDuration: 2 * time.Second, ReconcileDuration: 2 * time.Second,
			DeleteDuration: time.Second, ProgressInterval: 500 * time.Millisecond},
		RuntimeAPIServers: runtimeapi.ModePerShoot,
		StartTimeout:      3 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	w := &world{env: env, kcp: env.KCPClient, garden: env.GardenClient, project: env.Catalogue.Project, logs: logs}
	if err := w.kcp.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		_ = env.Stop()
		return nil, err
	}
	configFile, err := writeConfig()
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.GardenerProject, opts.ConfigFile = w.project, configFile
	opts.GardenerQPS, opts.GardenerBurst = 500, 1000
	mgr, err := app.NewManager(env.KCP, env.Garden, opts, controllers.All()...)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("new manager: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopShared = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
		_ = env.Stop()
		_ = os.Remove(configFile)
	}
	return w, nil
}

// writeConfig writes the golden operator configuration with the self-service features on: dedicated audit log
// tenants from a pool in kcp-system, registry caches without the DNS check (the sandbox has no internet), and a
// short deletion window for the aws plan.
func writeConfig() (string, error) {
	raw, err := os.ReadFile(goldenConfig)
	if err != nil {
		return "", err
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", err
	}
	doc["deletion"] = map[string]any{"defaultGracePeriod": "1h", "planGracePeriods": map[string]any{"aws": awsWindow.String()},
		"maxGracePeriod": "720h"}
	doc["registryCache"] = map[string]any{"syncInterval": "1h", "checkUpstreamDNS": false}
	shootCfg, _ := doc["shoot"].(map[string]any)
	auditLog, _ := shootCfg["auditLog"].(map[string]any)
	auditLog["pool"] = map[string]any{"enabled": true, "namespace": kcpNamespace}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "kim-selfservice-*.yaml")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.Write(out)
	return f.Name(), err
}

// kebRuntime loads the golden aws Runtime as another instance: runtime ID id, shoot name shootName.
func kebRuntime(t *testing.T, id, shootName string) *imv1.Runtime {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "adapters", "gardener", "testdata", "runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		t.Fatal(err)
	}
	rt.Namespace, rt.Name, rt.Generation = kcpNamespace, id, 0
	rt.Spec.Shoot.Name = shootName
	rt.Labels[imv1.LabelRuntimeID] = id
	rt.Labels[imv1.LabelKymaName] = id
	rt.Labels[imv1.LabelShootName] = shootName
	return rt
}

func (w *world) runtime(t *testing.T, id string) *imv1.Runtime {
	t.Helper()
	rt := &imv1.Runtime{}
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: id}, rt)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func describe(rt *imv1.Runtime) string {
	if rt == nil {
		return "NotFound"
	}
	for _, c := range rt.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return fmt.Sprintf("%s (generation %d, observed %d) %s: %s", rt.Status.State, rt.Generation, rt.Status.ObservedGeneration, c.Reason, c.Message)
		}
	}
	return string(rt.Status.State)
}

func (w *world) waitReady(t *testing.T, id string) *imv1.Runtime {
	t.Helper()
	var rt *imv1.Runtime
	eventually(t, provisionTimeout, "runtime "+id+" Ready", func() (bool, string) {
		rt = w.runtime(t, id)
		return rt != nil && rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation, describe(rt)
	})
	return rt
}

// runtimeAdmin is an admin client of the runtime API server behind a shoot (from the sandbox, not the operator).
func (w *world) runtimeAdmin(t *testing.T, shootName string) client.Client {
	t.Helper()
	cfg, err := w.env.Runtimes.AdminConfig("garden-" + w.project + "/" + shootName)
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := app.NewScheme()
	c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond every 100 ms until it holds, failing after timeout with its last description.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, desc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Contains(b.buf.Bytes(), []byte(s))
}
