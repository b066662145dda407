// Package testenv is the one test environment of the project, used by the integration tests, the end-to-end
// tests, the benchmarks and `kim sandbox`: a KCP API server (StartKCP), the garden-in-a-box (StartGarden, one per
// process), the operator started and stopped in-process (StartOperator: fails on a manager error, returns once its
// caches are synced), the operator's logs (CaptureLogs), a "reconciled at least N times" wait built on
// controller-runtime's metrics (Reconciles, WaitReconciled) and the KEB-shaped fixtures (KEBGardenerCluster,
// LoadRuntime). Polling uses testify's require.Eventually/EventuallyWithT; nothing here sleeps to let a test pass.
//
// The functions that take a testing.TB skip under -short and fail the test on an error; the others return errors
// (the sandbox is a command, not a test).
package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kyma-project/kim/internal/testenv/keb"
)

// RepoRoot is the repository's root directory.
func RepoRoot() string { return keb.RepoRoot() }

// CRDDirectory is where the operator's generated CRDs are.
func CRDDirectory() string { return filepath.Join(RepoRoot(), "config", "crd", "bases") }

// RequireAssets skips a test under -short and fails it when the API server binaries are not configured.
func RequireAssets(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs API servers (KUBEBUILDER_ASSETS)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `export KUBEBUILDER_ASSETS=$(hack/envtest.sh)` or use `make test-integration`")
	}
}
