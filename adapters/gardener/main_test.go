package gardener

import (
	"testing"

	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv/garden"
)

// GardenBox returns the garden-in-a-box shared by all integration tests of this test binary (internal and external
// test package), started on first use so unit-test-only runs never pay for it; it skips the test under -short.
// Tests isolate themselves by object names; the simulated gardenlet runs with default timing.
func GardenBox(t *testing.T) *gardenbox.Env {
	t.Helper()
	return garden.Shared(t, garden.Options{})
}

func TestMain(m *testing.M) { garden.Main(m) }
