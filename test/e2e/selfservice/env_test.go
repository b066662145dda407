package selfservice

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

const (
	kcpNamespace = "kcp-system"
	repoRoot     = "../../.."
	goldenConfig = repoRoot + "/adapters/gardener/testdata/config.yaml"
	// testCRDs are the CRDs of APIs the operator uses but does not own (AuditLog, Kyma; RegistryCacheConfig for runtimes).
	testCRDs = repoRoot + "/adapters/kube/testdata/crds"
	// awsWindow is the deletion window of the aws plan here: short, so a tenant's release after it is observed.
	awsWindow = 20 * time.Second
	// provisionTimeout bounds a whole provisioning: an API server per shoot starts here, and on a CI machine running
	// another integration package next to this one that took more than 4 minutes for four shoots.
	provisionTimeout = 8 * time.Minute
)

// world is the process's garden-in-a-box (test/testenv) with this test's operator running.
type world struct {
	env     *gardenbox.Env
	kcp     client.Client
	garden  client.Client
	project string
	// logs holds everything the operator logged (checked for credentials).
	logs *testenv.Logs
	// listenerPort is the operator's Runtime Watcher listener (registryCache.listenerPort).
	listenerPort int
}

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	kcpCRDs     sync.Once
	kcpCRDsErr  error
	gardenSetup = testenv.GardenOptions{RuntimeAPIServers: runtimeapi.ModePerShoot,
		Gardenlet: gardenlet.Options{CreateDuration: 2 * time.Second, ReconcileDuration: 2 * time.Second,
			DeleteDuration: time.Second, ProgressInterval: 500 * time.Millisecond}}
)

// startWorld returns the shared garden-in-a-box (with the KCP CRDs of the APIs the operator uses but does not own)
// and runs the operator with the self-service features on until the test ends.
func startWorld(t *testing.T) *world {
	t.Helper()
	logs := testenv.CaptureLogs()
	env := testenv.Garden(t, gardenSetup)
	kcpCRDs.Do(func() {
		_, kcpCRDsErr = envtest.InstallCRDs(env.KCP, envtest.CRDInstallOptions{Paths: []string{filepath.Join(testCRDs, "kcp")},
			ErrorIfPathMissing: true})
	})
	if kcpCRDsErr != nil {
		t.Fatalf("install the KCP CRDs of foreign APIs: %v", kcpCRDsErr)
	}
	w := &world{env: env, kcp: env.KCPClient, garden: env.GardenClient, project: env.Catalogue.Project, logs: logs}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	w.listenerPort = port
	configFile, err := writeConfig(port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(configFile) })
	opts := testenv.Options(w.project)
	opts.ConfigFile = configFile
	testenv.RunOperator(t, env.KCP, env.Garden, opts)
	return w
}

// writeConfig writes the golden operator configuration with the self-service features on: dedicated audit log
// tenants from a pool in kcp-system, registry caches without the DNS check (the sandbox has no internet), and a
// short deletion window for the aws plan.
func writeConfig(listenerPort int) (string, error) {
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
	// The periodic sync is an hour away: a change applied within seconds came through the watcher's event.
	doc["registryCache"] = map[string]any{"syncInterval": "1h", "checkUpstreamDNS": false, "listenerPort": listenerPort}
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

// freePort is a TCP port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
	testenv.Eventually(t, provisionTimeout, "runtime "+id+" Ready", func() (bool, string) {
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
	scheme, _ := scheme.New()
	c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
