package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kyma-project/kim/test/testenv/tools"
)

// TestSandboxCommand runs the real sandbox command (`sandbox --no-samples`) as a process (acceptance 2 and 4 of issue 3):
// the garden serves the catalogue through kubectl, the admission rejects an unknown machine type, a valid
// shoot succeeds and its gardener-issued kubeconfig works, and SIGINT leaves neither processes nor
// temporary directories behind.
func TestSandboxCommand(t *testing.T) {
	root, work, bin := buildSandbox(t)
	kubectl := tools.Require(t, "kubectl", "the test reads the sandbox's garden with it")
	// A private working and temp directory lets the test find every process and directory the sandbox made.
	cwd, tmp, dir := filepath.Join(work, "cwd"), filepath.Join(work, "tmp"), filepath.Join(work, "sandbox")
	for _, d := range []string{cwd, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	cmd := exec.Command(bin, "--no-samples", "--dir", dir, "--crds", filepath.Join(root, "config", "crd", "bases"),
		"--shoot-create-duration", "1s", "--metrics-bind-address", "0")
	cmd.Dir, cmd.Stdout, cmd.Stderr = cwd, &stdout, &stdout
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			if err := <-exited; err != nil {
				t.Logf("sandbox exited with %v", err)
			}
		}
		t.Logf("sandbox output:\n%s", stdout.String())
	}()

	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("sandbox exited before ready: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("sandbox not ready within 3m")
		}
	}
	garden := filepath.Join(dir, "garden.kubeconfig")
	out, err := exec.Command(kubectl, "--kubeconfig", garden, "get", "cloudprofiles", "-o", "name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cloudprofile.core.gardener.cloud/converged-cloud-kyma") {
		t.Errorf("kubectl get cloudprofiles: %v\n%s", err, out)
	}
	shoot := filepath.Join(work, "shoot.yaml")
	if err := os.WriteFile(shoot, []byte(badShoot), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(kubectl, "--kubeconfig", garden, "create", "-f", shoot).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "m99.huge") {
		t.Errorf("a shoot with an unknown machine type must be rejected naming it: %v\n%s", err, out)
	}

	// A valid shoot reaches Succeeded and the kubeconfig the gardener-apiserver issues for it works.
	good := strings.NewReplacer("name: bad", "name: good", "m99.huge", "m6i.large").Replace(badShoot)
	if err := os.WriteFile(shoot, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(kubectl, "--kubeconfig", garden, "create", "-f", shoot).CombinedOutput(); err != nil {
		t.Fatalf("create valid shoot: %v\n%s", err, out)
	}
	waitCmd := exec.Command(kubectl, "--kubeconfig", garden, "-n", "garden-kyma", "wait", "shoot/good", "--timeout=120s",
		"--for=jsonpath={.status.lastOperation.state}=Succeeded")
	if out, err := waitCmd.CombinedOutput(); err != nil {
		t.Fatalf("shoot did not succeed: %v\n%s", err, out)
	}
	req := filepath.Join(work, "req.json")
	if err := os.WriteFile(req, []byte(`{"apiVersion":"authentication.gardener.cloud/v1alpha1","kind":"AdminKubeconfigRequest","spec":{"expirationSeconds":600}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(kubectl, "--kubeconfig", garden, "create", "--raw",
		"/apis/core.gardener.cloud/v1beta1/namespaces/garden-kyma/shoots/good/adminkubeconfig", "-f", req).Output()
	if err != nil {
		t.Fatalf("adminkubeconfig: %v", err)
	}
	var resp struct {
		Status struct {
			Kubeconfig []byte `json:"kubeconfig"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Status.Kubeconfig) == 0 {
		t.Fatalf("adminkubeconfig response: %v\n%s", err, out)
	}
	shootKubeconfig := filepath.Join(work, "shoot.kubeconfig")
	if err := os.WriteFile(shootKubeconfig, resp.Status.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(kubectl, "--kubeconfig", shootKubeconfig, "auth", "whoami").CombinedOutput(); err != nil {
		t.Errorf("the issued kubeconfig does not work against the runtime API server: %v\n%s", err, out)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("sandbox exit after SIGINT: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("sandbox did not stop within 2m of SIGINT")
	}
	if left := processesIn(cwd); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("temporary files left behind: %v", names)
	}
	if _, err := os.Stat(filepath.Join(dir, "ready")); !os.IsNotExist(err) {
		t.Errorf("ready file must be removed on shutdown: %v", err)
	}
}

// sandboxBinary is the sandbox command, built once for this package's tests: its link (garden-in-a-box and the
// operator) is among the largest of the repository, and each test built it for itself before.
var sandboxBinary struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sandboxBinary.dir != "" {
		_ = os.RemoveAll(sandboxBinary.dir)
	}
	os.Exit(code)
}

// buildSandbox skips under -short, requires the API server binaries and builds the sandbox command (once per test
// binary); it returns the repository root, a temporary working directory of the test and the binary.
func buildSandbox(t *testing.T) (root, work, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts API servers")
	}
	tools.RequireAssets(t)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	sandboxBinary.once.Do(func() {
		sandboxBinary.dir, sandboxBinary.err = os.MkdirTemp("", "kim-sandbox-command-")
		if sandboxBinary.err != nil {
			return
		}
		sandboxBinary.path = filepath.Join(sandboxBinary.dir, "sandbox-command")
		if out, err := exec.Command("go", "build", "-o", sandboxBinary.path, ".").CombinedOutput(); err != nil {
			sandboxBinary.err = fmt.Errorf("build the sandbox: %w\n%s", err, out)
		}
	})
	if sandboxBinary.err != nil {
		t.Fatal(sandboxBinary.err)
	}
	return root, t.TempDir(), sandboxBinary.path
}

// processesIn lists processes whose working directory is dir (children inherit the sandbox's).
func processesIn(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err == nil && cwd == dir {
			cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
			out = append(out, filepath.Base(p)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

const badShoot = `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata:
  name: bad
  namespace: garden-kyma
spec:
  cloudProfile: {kind: CloudProfile, name: aws}
  credentialsBindingName: aws-sandbox
  region: eu-central-1
  kubernetes: {version: "1.33"}
  networking: {type: calico, nodes: 10.250.0.0/16, pods: 10.96.0.0/13, services: 10.104.0.0/13}
  provider:
    type: aws
    workers:
    - name: cpu-worker-0
      machine: {type: m99.huge, image: {name: gardenlinux}}
      minimum: 1
      maximum: 1
      zones: [eu-central-1a]
`
