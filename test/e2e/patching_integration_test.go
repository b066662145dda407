package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/catalogue"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// forceDeletionAfter is deletion.forceDeletionAfter of the test configuration: how long a deletion may be stuck on
// an error code Gardener accepts force-deletion for before the reaper sets it.
const forceDeletionAfter = 5 * time.Second

// Fresh identities of the patching scenarios (trial plan: no deletion window, so a deleted runtime's shoot is
// deleted at once).
const (
	driftRuntimeID   = "5c2e8a41-7b3d-4f9e-a1c6-2d8b0e9f7a13"
	driftShoot       = "p-drift"
	suspendRuntimeID = "a8f3d6b2-1c4e-4b7a-9e5d-3f2a1b0c9d84"
	suspendShoot     = "p-suspend"
	noSeedRuntimeID  = "e4b7c1d9-2a6f-4c3e-8b5a-7d9e0f1a2b35"
	noSeedShoot      = "p-noseed"
	adoptRuntimeID   = "7d1e3b9a-4c2f-4a8e-b6d5-0e9f8a7b6c21"
	adoptShoot       = "p-adopt"
	// noSeedRegion is an AWS region of the cloud profile that no other scenario uses: its seed is hidden from
	// scheduling during the test.
	noSeedRegion = "us-west-2"
	// firstPool is the worker pool of the trial Runtime.
	firstPool = "cpu-worker-0"
)

// patchingScenarios are what only fake-based unit tests covered before: drift correction, the suspend and force
// annotations, enforceSeedLocation (issue 6) and force-deletion of a stuck deletion (issue 7). Each scenario uses
// its own Runtimes, so they run concurrently with the other scenarios.
func (w *world) patchingScenarios(trial *imv1.Runtime) []scenario {
	return []scenario{
		{"SeedEnforcedDriftForceThenForceDeletion", func(t *testing.T) {
			rt := freshRuntime(trial, driftRuntimeID, driftShoot)
			rt.Spec.Shoot.EnforceSeedLocation = ptr.To(true)
			w.provisionFresh(t, rt)
			w.checkSeedEnforced(t, rt)
			w.driftCorrection(t, rt)
			if !t.Failed() {
				w.authConfigMapDrift(t, rt)
			}
			if !t.Failed() {
				w.forcePatch(t, rt)
			}
			if !t.Failed() {
				w.forceDeletion(t, rt)
			}
		}},
		{"AdoptPredecessorShoot", func(t *testing.T) {
			w.adoptPredecessor(t, freshRuntime(trial, adoptRuntimeID, adoptShoot))
		}},
		{"SuspendPatch", func(t *testing.T) {
			rt := freshRuntime(trial, suspendRuntimeID, suspendShoot)
			w.provisionFresh(t, rt)
			w.suspendPatch(t, rt)
		}},
		{"SeedNotAvailable", func(t *testing.T) {
			rt := freshRuntime(trial, noSeedRuntimeID, noSeedShoot)
			rt.Spec.Shoot.EnforceSeedLocation = ptr.To(true)
			rt.Spec.Shoot.Region = noSeedRegion
			rt.Labels["kyma-project.io/region"] = noSeedRegion
			rt.Spec.Shoot.Provider.Workers[0].Zones = []string{noSeedRegion + "a"}
			w.hideSeed(t, catalogue.SeedName(rt.Spec.Shoot.Provider.Type, noSeedRegion))
			w.seedNotAvailable(t, rt)
		}},
	}
}

// freshRuntime is a copy of rt as KEB sends it for another instance.
func freshRuntime(rt *imv1.Runtime, runtimeID, shootName string) *imv1.Runtime {
	out := keb.WithIdentity(rt, runtimeID, shootName)
	out.Labels["kyma-project.io/instance-id"] = "instance-" + runtimeID
	return out
}

// provisionFresh creates the Runtime and waits until it is Ready with the generated shoot.
func (w *world) provisionFresh(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	if err := w.kcp.Create(context.Background(), rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	got := w.waitReady(t, rt.Name, provisionTimeout)
	w.checkShootMatchesGenerated(t, got)
}

// checkSeedEnforced: with enforceSeedLocation in a region that has a seed, the shoot asks for a seed in its region
// and Gardener placed it there (issue 6).
func (w *world) checkSeedEnforced(t *testing.T, rt *imv1.Runtime) {
	s := w.shoot(t, rt.Spec.Shoot.Name)
	if s.Spec.SeedSelector == nil || s.Spec.SeedSelector.MatchLabels["seed.gardener.cloud/region"] != rt.Spec.Shoot.Region {
		t.Errorf("shoot %s: seedSelector %+v, want region %s", s.Name, s.Spec.SeedSelector, rt.Spec.Shoot.Region)
	}
	if want := catalogue.SeedName(rt.Spec.Shoot.Provider.Type, rt.Spec.Shoot.Region); ptr.Deref(s.Spec.SeedName, "") != want {
		t.Errorf("shoot %s is on seed %q, want %s", s.Name, ptr.Deref(s.Spec.SeedName, ""), want)
	}
}

// hideSeed takes a seed out of scheduling (as Gardener operators do with a seed that must not get new shoots) until
// the test ends.
func (w *world) hideSeed(t *testing.T, name string) {
	setVisible := func(visible bool) {
		seed := &gardencorev1beta1.Seed{}
		if err := w.garden.Get(context.Background(), client.ObjectKey{Name: name}, seed); err != nil {
			t.Fatalf("get seed %s: %v", name, err)
		}
		patch := client.MergeFrom(seed.DeepCopy())
		if seed.Spec.Settings == nil {
			seed.Spec.Settings = &gardencorev1beta1.SeedSettings{}
		}
		seed.Spec.Settings.Scheduling = &gardencorev1beta1.SeedSettingScheduling{Visible: visible}
		if err := w.garden.Patch(context.Background(), seed, patch); err != nil {
			t.Fatalf("set seed %s visible=%t: %v", name, visible, err)
		}
	}
	setVisible(false)
	t.Cleanup(func() { setVisible(true) })
}

// seedNotAvailable: with enforceSeedLocation in a region without a usable seed the Runtime fails with a stable
// reason and no shoot is created; deleting it needs nothing in the garden.
func (w *world) seedNotAvailable(t *testing.T, rt *imv1.Runtime) {
	if err := w.kcp.Create(context.Background(), rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	var got *imv1.Runtime
	testenv.Eventually(t, stepTimeout, "runtime "+rt.Name+" Failed", func() (bool, string) {
		got = w.runtime(t, rt.Name)
		if s := w.shoot(t, rt.Spec.Shoot.Name); s != nil {
			t.Fatalf("a shoot was created without a seed in region %s: %+v", noSeedRegion, s.Spec.SeedSelector)
		}
		return got != nil && got.Status.ObservedGeneration == got.Generation && got.Status.State == imv1.RuntimeStateFailed, describe(got)
	})
	c := readyCondition(got)
	if c.Reason != string(lifecycle.ReasonSeedNotAvailable) || !strings.Contains(c.Message, noSeedRegion) {
		t.Errorf("Ready condition %s: %q, want reason %s naming region %s", c.Reason, c.Message, lifecycle.ReasonSeedNotAvailable, noSeedRegion)
	}
	if got.Status.ProvisioningCompleted {
		t.Error("status.provisioningCompleted is true without a shoot")
	}
	w.deleteRuntime(t, rt)
	if s := w.shoot(t, rt.Spec.Shoot.Name); s != nil {
		t.Errorf("shoot %s exists after the runtime without a seed was deleted", s.Name)
	}
}

// driftCorrection: fields the operator owns, changed or removed on the shoot by someone else, are re-applied, and the
// Runtime is Ready again once Gardener reconciled the corrected shoot (issue 6).
func (w *world) driftCorrection(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	gen := w.runtime(t, rt.Name).Generation
	want := worker(w.shoot(t, shootName), firstPool).Maximum

	drifted := w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) { worker(s, firstPool).Maximum = want + 2 })
	if got := worker(drifted, firstPool).Maximum; got != want+2 {
		t.Fatalf("the drift did not reach the shoot: maximum %d", got)
	}
	w.waitCorrected(t, rt.Name, shootName, drifted.Generation, func(s *gardencorev1beta1.Shoot) (bool, string) {
		got := worker(s, firstPool)
		return got != nil && got.Maximum == want, fmt.Sprintf("maximum %+v, want %d", ptr.Deref(got, gardencorev1beta1.Worker{}).Maximum, want)
	})

	const ext = "shoot-cert-service"
	drifted = w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		s.Spec.Extensions = slices.DeleteFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == ext })
	})
	if hasExtension(drifted, ext) {
		t.Fatalf("the drift did not reach the shoot: extensions %v", extensionTypes(drifted))
	}
	w.waitCorrected(t, rt.Name, shootName, drifted.Generation, func(s *gardencorev1beta1.Shoot) (bool, string) {
		return hasExtension(s, ext), fmt.Sprintf("extensions %v, want %s", extensionTypes(s), ext)
	})

	// Metadata: no new shoot generation, nothing for Gardener to do; the value is what tells.
	const label = "account"
	wantLabel := w.shoot(t, shootName).Labels[label]
	if wantLabel == "" {
		t.Fatalf("shoot %s lacks the generated label %s", shootName, label)
	}
	if s := w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) { delete(s.Labels, label) }); s.Labels[label] != "" {
		t.Fatalf("the label removal did not reach the shoot: %v", s.Labels)
	}
	testenv.Eventually(t, stepTimeout, "the operator to restore label "+label+" of shoot "+shootName, func() (bool, string) {
		got := w.shoot(t, shootName).Labels[label]
		return got == wantLabel, fmt.Sprintf("label %s=%q, want %q", label, got, wantLabel)
	})

	got := w.waitReady(t, rt.Name, stepTimeout)
	if got.Generation != gen {
		t.Errorf("drift correction changed the Runtime: generation %d, was %d", got.Generation, gen)
	}
	w.checkShootMatchesGenerated(t, got)
}

// waitCorrected waits until the operator re-applied the shoot after a change of someone else (which gave the shoot
// generation drifted), restored tells that the shoot is back to the generated value, Gardener reconciled it and the
// Runtime is Ready; the Runtime must not have reported Ready while Gardener worked on the correction.
func (w *world) waitCorrected(t *testing.T, rtName, shootName string, drifted int64, restored func(*gardencorev1beta1.Shoot) (bool, string)) {
	t.Helper()
	sawNotReady := false
	testenv.Eventually(t, stepTimeout, "the operator to correct the drift on shoot "+shootName, func() (bool, string) {
		// The Runtime is read before the shoot: when the shoot is reconciled now, it was at most that when the
		// Runtime status was read.
		rt := w.runtime(t, rtName)
		ready := rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation
		if !ready {
			sawNotReady = true
		}
		s := w.shoot(t, shootName)
		ok, desc := restored(s)
		return ok && s.Generation > drifted && shootReconciled(s) && ready,
			fmt.Sprintf("shoot generation %d (drifted %d), %s; runtime %s", s.Generation, drifted, desc, describe(rt))
	})
	if !sawNotReady {
		t.Errorf("runtime %s was never seen out of Ready while Gardener reconciled the corrected shoot %s", rtName, shootName)
	}
}

// shootReconciled: Gardener has finished the shoot's current generation successfully.
func shootReconciled(s *gardencorev1beta1.Shoot) bool {
	return s.Status.ObservedGeneration == s.Generation && s.Status.LastOperation != nil &&
		s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded
}

func hasExtension(s *gardencorev1beta1.Shoot, typ string) bool {
	return slices.Contains(extensionTypes(s), typ)
}

func extensionTypes(s *gardencorev1beta1.Shoot) []string {
	var out []string
	for _, e := range s.Spec.Extensions {
		out = append(out, e.Type)
	}
	return out
}

// authConfigMapDrift: the structured-authentication ConfigMap the operator applies next to the shoot holds the
// operator's own OIDC issuer (customer issuers are OpenIDConnect resources inside the runtime); someone replacing
// it is drift the operator corrects on its own.
func (w *world) authConfigMapDrift(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	ref := w.shoot(t, shootName).Spec.Kubernetes.KubeAPIServer
	if ref == nil || ref.StructuredAuthentication == nil {
		t.Fatalf("shoot %s has no structured authentication", shootName)
	}
	key := client.ObjectKey{Namespace: "garden-" + w.project, Name: ref.StructuredAuthentication.ConfigMapName}
	cm := &corev1.ConfigMap{}
	if err := w.garden.Get(context.Background(), key, cm); err != nil {
		t.Fatalf("get authentication ConfigMap of shoot %s: %v", shootName, err)
	}
	want := cm.Data[translate.AuthenticationConfigKey]
	issuer := ""
	if len(w.shootConfig.OperatorOIDC) > 0 {
		issuer = w.shootConfig.OperatorOIDC[0].IssuerURL
	}
	if issuer == "" || !strings.Contains(want, issuer) {
		t.Fatalf("authentication ConfigMap %s does not name the operator's issuer %q: %q", key.Name, issuer, want)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data[translate.AuthenticationConfigKey] = strings.ReplaceAll(want, issuer, "https://issuer.attacker.example.com")
	if err := w.garden.Patch(context.Background(), cm, patch); err != nil {
		t.Fatalf("change authentication ConfigMap %s: %v", key.Name, err)
	}
	testenv.Eventually(t, stepTimeout, "the operator to restore ConfigMap "+key.Name, func() (bool, string) {
		cur := &corev1.ConfigMap{}
		if err := w.garden.Get(context.Background(), key, cur); err != nil {
			t.Fatalf("get authentication ConfigMap %s: %v", key.Name, err)
		}
		return cur.Data[translate.AuthenticationConfigKey] == want, "issuer still replaced"
	})
	w.waitReady(t, rt.Name, stepTimeout)
}
