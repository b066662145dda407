// Package testenv is the one test environment of the project, used by the integration tests, the end-to-end
// tests, the benchmarks and the sandbox command (`test/cmd/sandbox`): a KCP API server (StartKCP), the garden-in-a-box (StartGarden, one per
// process), the operator started and stopped in-process (StartOperator: fails on a manager error, returns once its
// caches are synced), the operator's logs (CaptureLogs), a "reconciled at least N times" wait built on
// controller-runtime's metrics (Reconciles, WaitReconciled) and the KEB-shaped fixtures (KEBGardenerCluster,
// LoadRuntime). Polling uses testify's require.Eventually/EventuallyWithT; nothing here sleeps to let a test pass.
//
// The functions that take a testing.TB skip under -short and fail the test on an error; the others return errors
// (the sandbox is a command, not a test).
package testenv

import (
	"path/filepath"

	"github.com/kyma-project/kim/test/testenv/garden"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// RepoRoot is the repository's root directory.
func RepoRoot() string { return keb.RepoRoot() }

// CRDDirectory is where the operator's generated CRDs are.
func CRDDirectory() string { return filepath.Join(RepoRoot(), "config", "crd", "bases") }

// The garden-in-a-box and the logs live in the subpackage garden, which does not need the operator.
type (
	// GardenOptions choose what the garden-in-a-box simulates.
	GardenOptions = garden.Options
	// Logs keeps the operator's log lines.
	Logs = garden.Logs
)

var (
	// StartGarden starts a garden-in-a-box for a command (one per process; stop it with Stop).
	StartGarden = garden.Start
	// Garden returns the process's shared garden-in-a-box for a test (started on first use; Main stops it).
	Garden = garden.Shared
	// Main runs a package's tests and stops the shared garden-in-a-box: call it from TestMain.
	Main = garden.Main
	// CaptureLogs sends the operator's logs to a sink tests can search (and to $KIM_E2E_LOG).
	CaptureLogs = garden.CaptureLogs
	// RequireAssets skips under -short and fails without KUBEBUILDER_ASSETS.
	RequireAssets = garden.RequireAssets
)
