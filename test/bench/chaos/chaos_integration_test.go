package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kyma-project/kim/test/testenv/garden"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// TestChaosShortIntegration is `make chaos` in two minutes: a dozen Runtimes, 30 % Gardener faults, a few
// SIGKILLs of the manager, a short deletion window; every invariant must hold and the run must have exercised
// what the invariants speak about (kills, faults, shoot deletions, Secret reads).
func TestChaosShortIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	garden.RequireAssets(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./operator/cmd/manager")
	build.Dir = keb.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build manager: %v: %s", err, out)
	}
	c := defaults()
	c.duration, c.runtimes, c.faultShare = 100*time.Second, 12, 0.3
	c.killMin, c.killMax, c.kills = 25*time.Second, 40*time.Second, 3
	c.grace, c.opInterval, c.convergeTimeout = 20*time.Second, 1500*time.Millisecond, 5*time.Minute
	c.managerBin, c.workDir = bin, dir
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	r, err := run(ctx, c)
	var out bytes.Buffer
	if r != nil {
		r.print(&out)
		t.Log("\n" + out.String())
	}
	if err != nil {
		t.Fatalf("chaos run: %v (manager logs in %s)", err, dir)
	}
	for _, v := range r.violations {
		t.Errorf("invariant broken: %s", v)
	}
	if r.kills < 2 || r.restarts != r.kills+1 || total(r.faults) == 0 || r.deletionsChecked == 0 || r.reads == 0 {
		t.Errorf("the run did not exercise the invariants: %d kills, %d starts, faults %v, %d shoot deletions, %d Secret reads",
			r.kills, r.restarts, r.faults, r.deletionsChecked, r.reads)
	}
	if t.Failed() {
		keepLogs(t, dir)
	}
}

// keepLogs copies the manager logs out of the test's temporary directory, which is removed after the test.
func keepLogs(t *testing.T, dir string) {
	keep, err := os.MkdirTemp("", "kim-chaos-short-")
	if err != nil {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "manager-*.log"))
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil {
			_ = os.WriteFile(filepath.Join(keep, filepath.Base(l)), data, 0o600)
		}
	}
	t.Logf("manager logs kept in %s", keep)
}
