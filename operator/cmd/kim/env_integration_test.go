package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	runtimectrl "github.com/kyma-project/kim/operator/controllers/runtime"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

// The integration tests of kim's commands (migrate, probe) share one garden-in-a-box: the in-process
// gardener-apiserver can be started once per process. Each test uses its own runtime IDs and shoot names.
const (
	repoRoot     = "../../.."
	kcpNamespace = "kcp-system"
	// goldenConfig is the operator configuration of the golden shoots: the landscape of the tests.
	goldenConfig = repoRoot + "/adapters/gardener/testdata/config.yaml"
)

var shared struct {
	once sync.Once
	env  *testEnv
	err  error
}

// testEnv is garden-in-a-box with the operator's and Kyma's CRDs in KCP, one shared runtime API server behind every
// shoot, and kubeconfig files of KCP and garden as a person passes them to kim.
type testEnv struct {
	*gardenbox.Env
	dir        string
	kcpFile    string
	gardenFile string
	config     *config.OperatorConfig
}

func sharedEnv(t *testing.T) *testEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts garden-in-a-box")
	}
	if os.Getenv(gardenbox.EnvAssets) == "" {
		t.Fatalf("%s is not set: run `export %s=$(hack/envtest.sh)`", gardenbox.EnvAssets, gardenbox.EnvAssets)
	}
	shared.once.Do(func() { shared.env, shared.err = startEnv() })
	if shared.err != nil {
		t.Fatalf("start garden-in-a-box: %v", shared.err)
	}
	return shared.env
}

func startEnv() (*testEnv, error) {
	ctrl.SetLogger(zap.New(zap.WriteTo(logSink())))
	scheme, err := app.NewScheme()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(goldenConfig)
	if err != nil {
		return nil, err
	}
	env, err := gardenbox.Start(context.Background(), gardenbox.Options{
		CRDDirectoryPaths: []string{filepath.Join(repoRoot, "config", "crd", "bases"), filepath.Join("testdata", "kyma")},
		KCPScheme:         scheme,
		RuntimeAPIServers: runtimeapi.ModeShared,
		Gardenlet: gardenlet.Options{CreateDuration: 2 * time.Second, ReconcileDuration: time.Second,
			DeleteDuration: time.Second, ProgressInterval: 500 * time.Millisecond, MaxConcurrentReconciles: 25},
		StartTimeout: 3 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kim-cmd-it-")
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	if err := env.WriteKubeconfigs(dir); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	if err := env.KCPClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &testEnv{Env: env, dir: dir, config: cfg, kcpFile: filepath.Join(dir, gardenbox.KCPKubeconfigFile),
		gardenFile: filepath.Join(dir, gardenbox.GardenKubeconfigFile)}, nil
}

// logSink is $KIM_IT_LOG (a file) when set; the operator's logs are discarded otherwise.
func logSink() *os.File {
	if path := os.Getenv("KIM_IT_LOG"); path != "" {
		if f, err := os.Create(path); err == nil {
			return f
		}
	}
	f, _ := os.Open(os.DevNull)
	return f
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop garden-in-a-box:", err)
			code = 1
		}
		_ = os.RemoveAll(shared.env.dir)
	}
	os.Exit(code)
}

// startOperator runs the real manager with every controller and the golden configuration until the test ends.
func (e *testEnv) startOperator(t *testing.T) client.Reader {
	t.Helper()
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.ConfigFile = goldenConfig
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
	mgr, err := app.NewManager(e.KCP, e.Garden, opts, all...)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager: %v", err)
		}
	})
	return mgr.GetClient()
}

// eventually polls cond until it holds, failing after timeout with its last description.
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
		time.Sleep(200 * time.Millisecond)
	}
}
