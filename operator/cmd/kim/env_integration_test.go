package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

// The integration tests of kim's commands (migrate, probe, the manager's previous arguments) share the process's
// garden-in-a-box (test/testenv) with Kyma's CRD added to its KCP. Each test uses its own runtime IDs and shoot
// names.
const kcpNamespace = "kcp-system"

var (
	repoRoot = testenv.RepoRoot()
	// goldenConfig is the operator configuration of the golden shoots: the landscape of the tests.
	goldenConfig = testenv.GoldenConfig()
)

// gardenOptions: one runtime API server behind every shoot (kubeconfigs are used), a quick gardenlet that
// reconciles the 20 shoots of the migration fixture at once. Creation takes 5 s.
var gardenOptions = testenv.GardenOptions{
	RuntimeAPIServers: runtimeapi.ModeShared,
	Gardenlet: gardenlet.Options{CreateDuration: 5 * time.Second, ReconcileDuration: time.Second,
		DeleteDuration: time.Second, ProgressInterval: 500 * time.Millisecond, MaxConcurrentReconciles: 25},
}

func TestMain(m *testing.M) { testenv.Main(m) }

// testEnv is the shared garden-in-a-box, the golden configuration and kubeconfig files of KCP and garden (in the
// test's temporary directory) as a person passes them to kim.
type testEnv struct {
	*gardenbox.Env
	kcpFile    string
	gardenFile string
	config     *config.OperatorConfig
}

var prepared struct {
	once   sync.Once
	config *config.OperatorConfig
	err    error
}

func sharedEnv(t *testing.T) *testEnv {
	t.Helper()
	env := testenv.Garden(t, gardenOptions)
	prepared.once.Do(func() { prepared.config, prepared.err = prepare(env) })
	if prepared.err != nil {
		t.Fatalf("prepare garden-in-a-box for kim's commands: %v", prepared.err)
	}
	dir := t.TempDir()
	if err := env.WriteKubeconfigs(dir); err != nil {
		t.Fatal(err)
	}
	return &testEnv{Env: env, config: prepared.config, kcpFile: filepath.Join(dir, gardenbox.KCPKubeconfigFile),
		gardenFile: filepath.Join(dir, gardenbox.GardenKubeconfigFile)}
}

// prepare adds what KEB's landscape has beyond the operator's CRDs: the Kyma CRD and the KCP namespace.
func prepare(env *gardenbox.Env) (*config.OperatorConfig, error) {
	if _, err := envtest.InstallCRDs(env.KCP, envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "kyma")},
		ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("install the Kyma CRD: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}
	if err := env.KCPClient.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return config.Load(goldenConfig)
}

// startOperator runs the real manager with every controller and the golden configuration until the test ends.
func (e *testEnv) startOperator(t *testing.T) client.Reader {
	t.Helper()
	opts := testenv.Options(e.Catalogue.Project)
	opts.ConfigFile = goldenConfig
	return testenv.RunOperator(t, e.KCP, e.Garden, opts).Manager.GetClient()
}
