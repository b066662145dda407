package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/probe"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
)

// TestProbeIntegration runs the real `kim probe` with the shipped template (config/probe/runtime.yaml) against the
// operator on garden-in-a-box: a run passes; a run whose shoot Gardener fails to create (the simulated gardenlet's
// fault annotation) exits non-zero with kim_probe_success 0 and keeps its Runtime; the next run deletes that Runtime
// and passes.
func TestProbeIntegration(t *testing.T) {
	env := sharedEnv(t)
	env.startOperator(t)
	work := t.TempDir()
	args := func(metrics string) []string {
		return []string{"--kubeconfig", env.kcpFile, "--runtime", filepath.Join(repoRoot, "config", "probe", "runtime.yaml"),
			"--poll-interval", "500ms", "--ready-timeout", "3m", "--delete-timeout", "2m", "--metrics-file", metrics, "-o", "json"}
	}

	first := filepath.Join(work, "first.prom")
	res, err := runProbeResult(t, args(first))
	if err != nil || !res.Success {
		t.Fatalf("a probe of a healthy landscape failed: %v %+v", err, res)
	}
	checkProbeMetrics(t, first, "kim_probe_success 1")
	if rt := probeRuntime(t, env, res.RuntimeID); rt != nil {
		t.Errorf("the probe's Runtime %s still exists after a successful probe", res.RuntimeID)
	}
	if res.User == "" {
		t.Error("the probe did not authenticate at the runtime")
	}

	// Provisioning fails: Gardener refuses to create the probe's shoot.
	stop := failNewProbeShoots(t, env)
	failed := filepath.Join(work, "failed.prom")
	res, err = runProbeResult(t, args(failed))
	stop()
	if !errors.Is(err, probe.ErrFailed) || res.Success || res.Failed != probe.PhaseReady || !res.Kept {
		t.Fatalf("a probe whose shoot fails: error %v, result %+v; want ErrFailed in phase ready, Runtime kept", err, res)
	}
	checkProbeMetrics(t, failed, "kim_probe_success 0", `kim_probe_phase_success{phase="ready"} 0`)
	kept := res.RuntimeID
	if rt := probeRuntime(t, env, kept); rt == nil || rt.Status.State != imv1.RuntimeStateFailed {
		t.Errorf("the failed probe's Runtime: %v; want it kept in state Failed", rt)
	}

	// The next run cleans the orphan up and passes.
	again := filepath.Join(work, "again.prom")
	res, err = runProbeResult(t, args(again))
	if err != nil || !res.Success || res.OrphansCleaned != 1 {
		t.Fatalf("the probe after a failed one: %v %+v; want success with 1 orphan cleaned", err, res)
	}
	checkProbeMetrics(t, again, "kim_probe_success 1", "kim_probe_orphans_cleaned 1")
	if rt := probeRuntime(t, env, kept); rt != nil {
		t.Errorf("the failed probe's Runtime %s was not cleaned up", kept)
	}
}

func runProbeResult(t *testing.T, args []string) (probe.Result, error) {
	t.Helper()
	var out bytes.Buffer
	err := runProbe(context.Background(), args, &out)
	var res probe.Result
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
		t.Fatalf("kim probe -o json printed no result (%v): %s", jerr, out.String())
	}
	t.Logf("kim probe: success=%t failed=%q phases=%+v orphans=%d error=%q", res.Success, res.Failed, res.Phases, res.OrphansCleaned, res.Error)
	return res, err
}

func checkProbeMetrics(t *testing.T, path string, want ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(string(data), w+"\n") {
			t.Errorf("the probe's metrics lack %q:\n%s", w, data)
		}
	}
}

func probeRuntime(t *testing.T, env *testEnv, id string) *imv1.Runtime {
	t.Helper()
	rt := &imv1.Runtime{}
	if err := env.KCPClient.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: id}, rt); err != nil {
		return nil
	}
	return rt
}

// failNewProbeShoots makes the simulated gardenlet fail the creation of every probe shoot that appears from now on
// with a non-retryable error (as Gardener does without permission in the cloud account), until stop is called.
func failNewProbeShoots(t *testing.T, env *testEnv) (stop func()) {
	t.Helper()
	ns := env.Catalogue.ProjectNamespace()
	existing := map[string]bool{}
	var list gardencorev1beta1.ShootList
	if err := env.GardenClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		existing[s.Name] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			var list gardencorev1beta1.ShootList
			if err := env.GardenClient.List(ctx, &list, client.InNamespace(ns)); err == nil {
				for i := range list.Items {
					s := &list.Items[i]
					if existing[s.Name] || !strings.HasPrefix(s.Name, "p-") {
						continue
					}
					patch := client.MergeFrom(s.DeepCopy())
					if s.Annotations == nil {
						s.Annotations = map[string]string{}
					}
					s.Annotations[gardenlet.AnnotationFailWith] = "ERR_INFRA_UNAUTHORIZED"
					s.Annotations[gardenlet.AnnotationFailOperation] = "Create"
					if err := env.GardenClient.Patch(ctx, s, patch); err == nil {
						existing[s.Name] = true
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() { cancel(); wg.Wait() }
}
