package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// TestSandboxKEBPlanSamples runs the demo (`sandbox --exit-when-ready`, the operator with the sandbox's own
// configuration) with one sample Runtime per KEB plan (keb.Plans) and expects every one Ready: whichever of KEB's
// plans a sample takes, `make demo` reaches Ready (issue 45).
func TestSandboxKEBPlanSamples(t *testing.T) {
	root, work, bin := buildSandbox(t)
	samples := filepath.Join(work, "samples")
	if err := os.Mkdir(samples, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range keb.Plans {
		rt, err := keb.PlanRuntime(p, fmt.Sprintf("4e45d000-0000-4000-8000-%012d", i), fmt.Sprintf("c-45d%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		rt.APIVersion, rt.Kind = imv1.GroupVersion.String(), "Runtime"
		raw, err := yaml.Marshal(rt)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(samples, p.Key()+".yaml"), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "--exit-when-ready", "--timeout", "4m", "--samples", samples, "--dir", filepath.Join(work, "sandbox"),
		"--crds", filepath.Join(root, "config", "crd", "bases"), "--shoot-create-duration", "1s", "--metrics-bind-address", "0")
	cmd.Dir, cmd.Stdout, cmd.Stderr = work, &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the demo with every KEB plan as sample did not reach Ready: %v\n%s", err, out.String())
	}
	t.Logf("sandbox output:\n%s", out.String())
}
