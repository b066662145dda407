package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/probe"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/probeconfig"
)

// TestProbeIntegration runs the real `kim probe` with what config/probe ships: the template (runtime.yaml), the
// CronJob's arguments (--runtime-ids) and, as its identity, the probe's ServiceAccount with exactly the rendered
// Role, RoleBinding and ValidatingAdmissionPolicy (an impersonating kubeconfig), against the operator on
// garden-in-a-box. A run passes; a run whose shoot Gardener fails to create (the simulated gardenlet's fault
// annotation) exits non-zero with kim_probe_success 0 and keeps its Runtime; the next run deletes that Runtime,
// provisions under the other ID and passes. A customer's Runtime that carries the probe's label survives all of
// it, and the probe's identity is refused everything else: that Runtime's deletion and kubeconfig, the Gardener
// credentials, listing Runtimes, creating a Runtime under another name; nobody else may create one under the
// probe's IDs.
func TestProbeIntegration(t *testing.T) {
	env := sharedEnv(t)
	env.startOperator(t)
	ctx := context.Background()
	work := t.TempDir()
	shipped := installProbe(t, env)
	probeFile := filepath.Join(work, "probe.kubeconfig")
	writeRESTKubeconfig(t, probeFile, shipped.config)
	probeClient, err := client.New(shipped.config, client.Options{Scheme: env.KCPClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	template, err := probe.LoadTemplate(filepath.Join(repoRoot, "config", "probe", "runtime.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	outside := template.DeepCopy()
	outside.Name, outside.Namespace = "5d1e0c9a-7b3f-4e2d-8a61-c0ffee000002", kcpNamespace
	testenv.Eventually(t, 30*time.Second, "the probe's Role and admission policy in force", func() (bool, string) {
		err := probeClient.Create(ctx, outside.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "the end-to-end probe creates only Runtimes named with its runtime IDs"), errString(err)
	})

	// A customer's Runtime, labelled as a probe's by whoever may write Runtimes, before any probe runs.
	customer := template.DeepCopy()
	customer.Name, customer.Namespace, customer.Spec.Shoot.Name = "5d1e0c9a-7b3f-4e2d-8a61-c0ffee000001", kcpNamespace, "c-probevic"
	customer.Labels[probe.LabelProbe] = "true"
	customer.Labels[imv1.LabelRuntimeID], customer.Labels[imv1.LabelKymaName] = customer.Name, customer.Name
	customer.Labels[imv1.LabelShootName], customer.Labels[imv1.LabelInstanceID] = customer.Spec.Shoot.Name, "customer-"+customer.Name
	if err := env.KCPClient.Create(ctx, customer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.KCPClient.Delete(context.Background(), customer)
	})

	args := func(metrics string) []string {
		return append(slices.Clone(shipped.args), "--kubeconfig", probeFile, "--runtime", filepath.Join(repoRoot, "config", "probe", "runtime.yaml"),
			"--poll-interval", "500ms", "--ready-timeout", "3m", "--delete-timeout", "2m", "--metrics-file", metrics, "-o", "json")
	}
	first := filepath.Join(work, "first.prom")
	res, err := runProbeResult(t, args(first))
	if err != nil || !res.Success {
		t.Fatalf("a probe of a healthy landscape failed: %v %+v", err, res)
	}
	checkProbeMetrics(t, first, "kim_probe_success 1")
	if !slices.Contains(shipped.ids, res.RuntimeID) {
		t.Errorf("the probe provisioned under %s, not one of its runtime IDs %v", res.RuntimeID, shipped.ids)
	}
	if rt := probeRuntime(t, env, res.RuntimeID); rt != nil {
		t.Errorf("the probe's Runtime %s still exists after a successful probe", res.RuntimeID)
	}
	if res.User == "" {
		t.Error("the probe did not authenticate at the runtime")
	}

	// Provisioning fails: Gardener refuses to create the probe's shoot.
	failNewProbeShoots(t, env)
	failed := filepath.Join(work, "failed.prom")
	res, err = runProbeResult(t, args(failed))
	if !errors.Is(err, probe.ErrFailed) || res.Success || res.Failed != probe.PhaseReady || !res.Kept {
		t.Fatalf("a probe whose shoot fails: error %v, result %+v; want ErrFailed in phase ready, Runtime kept", err, res)
	}
	checkProbeMetrics(t, failed, "kim_probe_success 0", `kim_probe_phase_success{phase="ready"} 0`)
	kept := res.RuntimeID
	if rt := probeRuntime(t, env, kept); rt == nil || rt.Status.State != imv1.RuntimeStateFailed {
		t.Errorf("the failed probe's Runtime: %v; want it kept in state Failed", rt)
	}

	// The next run cleans the orphan up, provisions under the other ID and passes.
	again := filepath.Join(work, "again.prom")
	res, err = runProbeResult(t, args(again))
	if err != nil || !res.Success || res.OrphansCleaned != 1 {
		t.Fatalf("the probe after a failed one: %v %+v; want success with 1 orphan cleaned", err, res)
	}
	checkProbeMetrics(t, again, "kim_probe_success 1", "kim_probe_orphans_cleaned 1")
	if rt := probeRuntime(t, env, kept); rt != nil {
		t.Errorf("the failed probe's Runtime %s was not cleaned up", kept)
	}
	if res.RuntimeID == kept || !slices.Contains(shipped.ids, res.RuntimeID) {
		t.Errorf("the run after a failed one provisioned under %s; want its other ID than %s", res.RuntimeID, kept)
	}
	if probeRuntime(t, env, customer.Name) == nil {
		t.Fatal("a customer's Runtime labelled as a probe's was deleted")
	}

	// The probe's identity may do nothing else.
	forbidden := map[string]error{
		"delete the customer's Runtime": probeClient.Delete(ctx, customer.DeepCopy()),
		"get the customer's Runtime":    probeClient.Get(ctx, client.ObjectKeyFromObject(customer), &imv1.Runtime{}),
		"list Runtimes":                 probeClient.List(ctx, &imv1.RuntimeList{}, client.InNamespace(kcpNamespace)),
		"get the customer's kubeconfig": probeClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: "kubeconfig-" + customer.Name}, &corev1.Secret{}),
		"get the Gardener credentials":  probeClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: "kim-gardener-kubeconfig"}, &corev1.Secret{}),
		"list Secrets":                  probeClient.List(ctx, &corev1.SecretList{}, client.InNamespace(kcpNamespace)),
	}
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("the probe may %s: %v, want Forbidden", what, err)
		}
	}
	if err := probeClient.Create(ctx, outside.DeepCopy(), client.DryRunAll); !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("the probe creates Runtime %s outside its IDs: %v, want the admission policy's refusal", outside.Name, err)
	}
	squatter := template.DeepCopy()
	squatter.Name, squatter.Namespace = shipped.ids[0], kcpNamespace
	err = env.KCPClient.Create(ctx, squatter, client.DryRunAll)
	if (!apierrors.IsForbidden(err) && !apierrors.IsInvalid(err)) || !strings.Contains(errString(err), "would have a runtime ID of the end-to-end probe") {
		t.Errorf("an administrator creates a Runtime under the probe's ID %s: %v, want the admission policy's refusal", squatter.Name, err)
	}
}

// shippedProbe is config/probe as installed into the KCP: a config acting as the probe's ServiceAccount, the
// CronJob's arguments that `kim probe` takes (--namespace, --runtime-ids) and its runtime IDs.
type shippedProbe struct {
	config *rest.Config
	args   []string
	ids    []string
}

// installProbe applies the ServiceAccount, Role, RoleBinding and admission policy of config/probe (as
// `kubectl apply -k config/probe` would: probeconfig renders them as kustomize does) and removes them when the test
// ends.
func installProbe(t *testing.T, env *testEnv) shippedProbe {
	t.Helper()
	ctx := context.Background()
	pc, err := probeconfig.Read(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var sp shippedProbe
	if sp.ids, err = probe.ParseRuntimeIDs(probeconfig.RuntimeIDs(pc.Args)); err != nil || len(sp.ids) < 2 {
		t.Fatalf("the CronJob's runtime IDs %v: %v", sp.ids, err)
	}
	for _, a := range pc.Args {
		if strings.HasPrefix(a, "--runtime-ids=") || strings.HasPrefix(a, "--namespace=") {
			sp.args = append(sp.args, a)
		}
	}
	for _, o := range pc.Objects {
		if err := env.KCPClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kim-probe-test"), client.ForceOwnership); err != nil {
			t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		t.Cleanup(func() { _ = env.KCPClient.Delete(context.Background(), o) })
	}
	sp.config = rest.CopyConfig(env.KCP)
	sp.config.Impersonate = rest.ImpersonationConfig{UserName: serviceaccount.MakeUsername(pc.Namespace, pc.ServiceAccount),
		Groups: append(serviceaccount.MakeGroupNames(pc.Namespace), "system:authenticated")}
	return sp
}

func writeRESTKubeconfig(t *testing.T, path string, cfg *rest.Config) {
	t.Helper()
	data, err := gardenbox.Kubeconfig(cfg, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "allowed"
	}
	return err.Error()
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

// failNewProbeShoots makes the simulated gardenlet fail the creation of the first probe shoot that appears from now
// on with a non-retryable error (as Gardener does without permission in the cloud account), until the test ends. The
// rule is in place before the probe creates its shoot: nothing races the simulated creation.
func failNewProbeShoots(t *testing.T, env *testEnv) {
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
	var mu sync.Mutex
	victim := ""
	remove := env.Gardenlet.FailMatching(func(s *gardencorev1beta1.Shoot) bool {
		mu.Lock()
		defer mu.Unlock()
		if victim == "" && s.Namespace == ns && strings.HasPrefix(s.Name, "p-") && !existing[s.Name] {
			victim = s.Name
		}
		return s.Namespace == ns && s.Name == victim
	}, gardencorev1beta1.LastOperationTypeCreate, "ERR_INFRA_UNAUTHORIZED")
	t.Cleanup(remove)
}
