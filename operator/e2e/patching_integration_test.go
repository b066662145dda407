package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	shootdomain "github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/mapping"
	"github.com/kyma-project/kim/operator/sandbox/catalogue"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
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
	out := withIdentity(rt, runtimeID, shootName)
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
	eventually(t, stepTimeout, "runtime "+rt.Name+" Failed", func() (bool, string) {
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
	eventually(t, stepTimeout, "the operator to restore label "+label+" of shoot "+shootName, func() (bool, string) {
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
	eventually(t, stepTimeout, "the operator to correct the drift on shoot "+shootName, func() (bool, string) {
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

// annotateRuntime sets (value != "") or removes an annotation of the Runtime, as a person does with kubectl.
func (w *world) annotateRuntime(t testing.TB, name, key, value string) {
	t.Helper()
	rt := w.runtime(t, name)
	if rt == nil {
		t.Fatalf("runtime %s does not exist", name)
	}
	patch := client.MergeFrom(rt.DeepCopy())
	if value == "" {
		delete(rt.Annotations, key)
	} else {
		metav1.SetMetaDataAnnotation(&rt.ObjectMeta, key, value)
	}
	if err := w.kcp.Patch(context.Background(), rt, patch); err != nil {
		t.Fatalf("annotate runtime %s: %v", name, err)
	}
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
	want := cm.Data[gardener.AuthenticationConfigKey]
	issuer := ""
	if len(w.shootConfig.OperatorOIDC) > 0 {
		issuer = w.shootConfig.OperatorOIDC[0].IssuerURL
	}
	if issuer == "" || !strings.Contains(want, issuer) {
		t.Fatalf("authentication ConfigMap %s does not name the operator's issuer %q: %q", key.Name, issuer, want)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data[gardener.AuthenticationConfigKey] = strings.ReplaceAll(want, issuer, "https://issuer.attacker.example.com")
	if err := w.garden.Patch(context.Background(), cm, patch); err != nil {
		t.Fatalf("change authentication ConfigMap %s: %v", key.Name, err)
	}
	eventually(t, stepTimeout, "the operator to restore ConfigMap "+key.Name, func() (bool, string) {
		cur := &corev1.ConfigMap{}
		if err := w.garden.Get(context.Background(), key, cur); err != nil {
			t.Fatalf("get authentication ConfigMap %s: %v", key.Name, err)
		}
		return cur.Data[gardener.AuthenticationConfigKey] == want, "issuer still replaced"
	})
	w.waitReady(t, rt.Name, stepTimeout)
}

// forcePatch: with nothing to correct, a person sets the force annotation; the operator applies the shoot once
// anyway (its ShootApplied event says why) and removes the annotation (issue 6).
func (w *world) forcePatch(t *testing.T, rt *imv1.Runtime) {
	gen := w.runtime(t, rt.Name).Generation
	if n := w.runtimeEvents(t, rt.Name, "ShootApplied", "forced by annotation"); n != 0 {
		t.Fatalf("%d forced applies before the annotation was set", n)
	}
	w.annotateRuntime(t, rt.Name, imv1.AnnotationForcePatchReconciliation, "true")
	eventually(t, stepTimeout, "the forced re-apply", func() (bool, string) {
		_, pending := w.runtime(t, rt.Name).Annotations[imv1.AnnotationForcePatchReconciliation]
		return !pending, "annotation still set"
	})
	// The event is written right after the apply and before the annotation is removed; the recorder sends it
	// asynchronously, hence the wait.
	eventually(t, stepTimeout, "a ShootApplied event for the forced apply", func() (bool, string) {
		n := w.runtimeEvents(t, rt.Name, "ShootApplied", "forced by annotation")
		return n == 1, fmt.Sprintf("%d forced-apply events", n)
	})
	got := w.waitReady(t, rt.Name, stepTimeout)
	if got.Generation != gen {
		t.Errorf("forcing changed the Runtime: generation %d, was %d", got.Generation, gen)
	}
	w.checkShootMatchesGenerated(t, got)
}

// runtimeEvents counts the Runtime's events with reason whose message contains why.
func (w *world) runtimeEvents(t *testing.T, runtimeID, reason, why string) int {
	t.Helper()
	var events corev1.EventList
	if err := w.kcp.List(context.Background(), &events, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	n := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Name == runtimeID && e.Reason == reason && strings.Contains(e.Message, why) {
			n++
		}
	}
	return n
}

// suspendPatch: with patching suspended drift is not corrected, and a spec change is not applied while the Runtime
// says so. Removing the annotation applies the change and the Runtime is Ready again (issue 6).
func (w *world) suspendPatch(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	old := worker(w.shoot(t, shootName), firstPool).Maximum
	w.annotateRuntime(t, rt.Name, imv1.AnnotationSuspendPatchReconciliation, "true")
	// Nothing in the status changes; wait until the operator's cache has the annotation so that the drift below is
	// judged with it.
	eventually(t, stepTimeout, "the operator to see the suspend annotation", func() (bool, string) {
		cached := &imv1.Runtime{}
		if err := w.operatorView.Get(context.Background(), client.ObjectKeyFromObject(rt), cached); err != nil {
			return false, err.Error()
		}
		return cached.Annotations[imv1.AnnotationSuspendPatchReconciliation] == "true", "not yet in the cache"
	})

	// Someone else changes the shoot: the operator keeps its hands off while Gardener reconciles that change.
	drift := old + 3
	drifted := w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) { worker(s, firstPool).Maximum = drift })
	var s *gardencorev1beta1.Shoot
	eventually(t, stepTimeout, "Gardener to reconcile the drifted shoot", func() (bool, string) {
		s = w.shoot(t, shootName)
		if m := worker(s, firstPool).Maximum; m != drift {
			t.Fatalf("shoot %s changed while patching is suspended: maximum %d, drifted to %d", shootName, m, drift)
		}
		return s.Status.ObservedGeneration >= drifted.Generation && shootReconciled(s), fmt.Sprintf("shoot generation %d, status %+v", s.Generation, s.Status.LastOperation)
	})
	if s.Generation != drifted.Generation {
		t.Errorf("shoot %s changed while patching is suspended: generation %d, drifted %d", shootName, s.Generation, drifted.Generation)
	}
	w.waitReady(t, rt.Name, stepTimeout)

	gen := w.updateRuntime(t, rt.Name, func(r *imv1.Runtime) { r.Spec.Shoot.Provider.Workers[0].Maximum = old + 1 })
	var got *imv1.Runtime
	eventually(t, stepTimeout, "runtime to report the suspended patch", func() (bool, string) {
		got = w.runtime(t, rt.Name)
		return got.Status.ObservedGeneration == gen && readyCondition(got).Reason == string(lifecycle.ReasonPatchSuspended), describe(got)
	})
	if got.Status.State != imv1.RuntimeStatePending {
		t.Errorf("suspended patch: state %s, want %s", got.Status.State, imv1.RuntimeStatePending)
	}
	s = w.shoot(t, shootName)
	if m := worker(s, firstPool).Maximum; m != drift || s.Generation != drifted.Generation {
		t.Fatalf("runtime generation %d applied while suspended: maximum %d (drifted to %d), shoot generation %d (was %d)",
			gen, m, drift, s.Generation, drifted.Generation)
	}

	w.annotateRuntime(t, rt.Name, imv1.AnnotationSuspendPatchReconciliation, "")
	w.waitCorrected(t, rt.Name, shootName, drifted.Generation, func(s *gardencorev1beta1.Shoot) (bool, string) {
		m := worker(s, firstPool).Maximum
		return m == old+1, fmt.Sprintf("maximum %d, want %d", m, old+1)
	})
	got = w.waitReady(t, rt.Name, stepTimeout)
	if got.Generation != gen {
		t.Errorf("runtime generation %d, want %d", got.Generation, gen)
	}
	w.checkShootMatchesGenerated(t, got)
}

// forceDeletion: the deleted runtime's shoot (trial: no window) is deleted, Gardener's deletion gets stuck on an error
// code it accepts force-deletion for, and the reaper sets confirmation.gardener.cloud/force-deletion once the deletion
// has been stuck for deletion.forceDeletionAfter (issue 7, docs/deletion.md).
func (w *world) forceDeletion(t *testing.T, rt *imv1.Runtime) {
	const code = gardencorev1beta1.ErrorCleanupClusterResources
	shootName := rt.Spec.Shoot.Name
	uid := w.shoot(t, shootName).UID
	w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailWith, string(code))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailOperation, string(gardencorev1beta1.LastOperationTypeDelete))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailMessage, "simulated: namespaces of the cluster stay in Terminating")
	})
	w.deleteRuntime(t, rt)

	sawStuck := false
	var s *gardencorev1beta1.Shoot
	eventually(t, stepTimeout+forceDeletionAfter, "force-deletion of shoot "+shootName, func() (bool, string) {
		s = w.shoot(t, shootName)
		if s == nil || s.UID != uid {
			t.Fatalf("shoot %s is gone although its deletion is stuck", shootName)
		}
		if s.DeletionTimestamp != nil && hasErrorCode(s, code) {
			sawStuck = true
		}
		return s.Annotations[v1beta1constants.AnnotationConfirmationForceDeletion] == "true",
			fmt.Sprintf("deleting=%t lastOperation=%+v lastErrors=%+v", s.DeletionTimestamp != nil, s.Status.LastOperation, s.Status.LastErrors)
	})
	if !sawStuck {
		t.Errorf("force-deletion set on shoot %s before its deletion was seen stuck with %s", shootName, code)
	}
	if s.Annotations[v1beta1constants.ConfirmationDeletion] != "true" {
		t.Errorf("shoot %s deleted without %s=true", shootName, v1beta1constants.ConfirmationDeletion)
	}
	// Server-side timestamps (seconds): the reaper's change that set force-deletion was not before the deletion had
	// been stuck for forceDeletionAfter.
	setAt, ok := forceDeletionSetAt(s)
	if !ok {
		t.Errorf("no managedFields entry of field manager %s sets the force-deletion annotation: %+v", gardener.FieldManager, s.ManagedFields)
	} else if earliest := s.DeletionTimestamp.Add(forceDeletionAfter - time.Second); setAt.Before(earliest) {
		t.Errorf("force-deletion set at %s, before the deletion (%s) was stuck for %s", setAt, s.DeletionTimestamp.Time, forceDeletionAfter)
	}

	// Like Gardener, the simulated gardenlet skips the failing cleanup of a force-deleted shoot.
	eventually(t, stepTimeout, "shoot "+shootName+" gone", func() (bool, string) {
		cur := w.shoot(t, shootName)
		return cur == nil || cur.UID != uid, "shoot still there"
	})
}

func hasErrorCode(s *gardencorev1beta1.Shoot, code gardencorev1beta1.ErrorCode) bool {
	for _, e := range s.Status.LastErrors {
		if slices.Contains(e.Codes, code) {
			return true
		}
	}
	return false
}

// forceDeletionSetAt is when the operator's field manager last changed fields including the force-deletion
// annotation.
func forceDeletionSetAt(s *gardencorev1beta1.Shoot) (time.Time, bool) {
	key := `"f:` + v1beta1constants.AnnotationConfirmationForceDeletion + `"`
	for _, m := range s.ManagedFields {
		if m.Manager == gardener.FieldManager && m.Time != nil && m.FieldsV1 != nil && strings.Contains(m.FieldsV1.GetRawString(), key) {
			return m.Time.Time, true
		}
	}
	return time.Time{}, false
}

// adoptPredecessor: a shoot the previous infrastructure manager created for a Runtime (its runtime-id annotation,
// no managed-by label, an older worker maximum) is taken over when the operator sees the Runtime: labelled,
// updated to the Runtime's spec, Ready, with an event; no second shoot, no ShootNameTaken.
func (w *world) adoptPredecessor(t *testing.T, rt *imv1.Runtime) {
	ctx := context.Background()
	spec, err := shootdomain.Generate(mapping.Runtime(rt), w.shootConfig)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Authentication != nil {
		data, err := gardener.AuthenticationConfigMapData(spec.Authentication)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: spec.Authentication.ConfigMapName, Namespace: "garden-" + w.project}, Data: data}
		if err := w.garden.Create(ctx, cm); err != nil {
			t.Fatalf("create the predecessor's authentication ConfigMap: %v", err)
		}
	}
	old, err := gardener.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	old.Labels = nil
	old.Annotations = map[string]string{shootdomain.AnnotationRuntimeID: rt.Name}
	old.Spec.Provider.Workers[0].Maximum++ // the Runtime asks for less than the predecessor had
	if err := w.garden.Create(ctx, old); err != nil {
		t.Fatalf("create the predecessor's shoot: %v", err)
	}
	uid := w.shoot(t, old.Name).UID

	if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	got := w.waitReady(t, rt.Name, provisionTimeout)
	s := w.shoot(t, old.Name)
	if s.UID != uid {
		t.Fatalf("shoot %s was replaced instead of adopted", old.Name)
	}
	if s.Labels[gardener.LabelManagedBy] != gardener.ManagedByValue {
		t.Errorf("adopted shoot lacks the managed-by label: %v", s.Labels)
	}
	w.checkShootMatchesGenerated(t, got)
	eventually(t, stepTimeout, "a ShootAdopted event", func() (bool, string) {
		return w.runtimeEvents(t, rt.Name, "ShootAdopted", "") > 0, "no event"
	})
}
