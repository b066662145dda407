package gardenbox_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

// env is shared by all tests of this package: the in-process gardener-apiserver can run once per process.
var env *gardenbox.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("SKIP: garden-in-a-box integration tests do not run with -short")
		os.Exit(0)
	}
	if os.Getenv(gardenbox.EnvAssets) == "" {
		fmt.Println("SKIP: garden-in-a-box tests need KUBEBUILDER_ASSETS; run `export KUBEBUILDER_ASSETS=$(hack/envtest.sh)`")
		os.Exit(0)
	}
	var log logr.Logger
	if os.Getenv("GARDENBOX_TEST_LOG") != "" { // debugging aid: log the gardenlet to stderr
		log = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	var err error
	env, err = gardenbox.Start(context.Background(), gardenbox.Options{
		Logger:            log,
		RuntimeAPIServers: runtimeapi.ModePerShoot,
		Gardenlet: gardenlet.Options{
			CreateDuration: 1500 * time.Millisecond, ReconcileDuration: 500 * time.Millisecond,
			DeleteDuration: 500 * time.Millisecond, ProgressInterval: 200 * time.Millisecond,
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("garden-in-a-box started: kcp %v, garden %v, catalogue %v, total %v\n",
		env.StartupTimes.KCP, env.StartupTimes.Garden, env.StartupTimes.Catalogue, env.StartupTimes.Total)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
		code = 1
	}
	os.Exit(code)
}

// createShoot creates a valid shoot of the catalogue, adjusted by mutate.
func createShoot(t *testing.T, name string, mutate func(*gardencorev1beta1.Shoot)) *gardencorev1beta1.Shoot {
	t.Helper()
	shoot, err := env.NewShoot(name, "aws")
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(shoot)
	}
	if err := env.GardenClient.Create(context.Background(), shoot); err != nil {
		t.Fatalf("create shoot %s: %v", name, err)
	}
	return shoot
}

func getShoot(t *testing.T, shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	t.Helper()
	got := &gardencorev1beta1.Shoot{}
	if err := env.GardenClient.Get(context.Background(), client.ObjectKeyFromObject(shoot), got); err != nil {
		t.Fatalf("get shoot %s: %v", shoot.Name, err)
	}
	return got
}

// operationWait bounds waitForOperation. An operation of a shoot with a runtime API server waits for its server's
// start, and the starts are serialised: on a busy 2-core machine (test-all runs other packages' API servers beside
// this one) a start took longer than the 60 s this wait once had. A failure says what the operation last reported,
// start errors included.
const operationWait = 4 * time.Minute

// waitForOperation waits until the shoot's lastOperation has the given type and state.
func waitForOperation(t *testing.T, shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState) *gardencorev1beta1.Shoot {
	t.Helper()
	var got *gardencorev1beta1.Shoot
	testenv.Eventually(t, operationWait, fmt.Sprintf("shoot %s %s %s", shoot.Name, op, state), func() (bool, string) {
		got = getShoot(t, shoot)
		last := got.Status.LastOperation
		return last != nil && last.Type == op && last.State == state, fmt.Sprintf("lastOperation %v", last)
	})
	return got
}

func noServer(s *gardencorev1beta1.Shoot) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[gardenlet.AnnotationNoRuntimeAPIServer] = "true"
}
