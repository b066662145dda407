package gardener

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
)

// shared is the garden-in-a-box of this package's integration tests (internal and external test
// package): the in-process gardener-apiserver can be started only once per process.
var shared struct {
	once sync.Once
	env  *gardenbox.Env
	err  error
}

// GardenBox returns the garden-in-a-box shared by all integration tests of this test binary, starting it on
// first use (so unit-test-only runs never pay for it). It skips the test under -short. Tests isolate
// themselves by object names; the environment runs the simulated gardenlet with default timing.
func GardenBox(t *testing.T) *gardenbox.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts garden-in-a-box")
	}
	shared.once.Do(func() {
		shared.env, shared.err = gardenbox.Start(context.Background(), gardenbox.Options{})
		if shared.err == nil {
			t.Logf("garden-in-a-box started: %+v", shared.env.StartupTimes)
		}
	})
	if shared.err != nil {
		t.Fatalf("start garden-in-a-box: %v", shared.err)
	}
	return shared.env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop garden-in-a-box:", err)
			code = 1
		}
	}
	os.Exit(code)
}
