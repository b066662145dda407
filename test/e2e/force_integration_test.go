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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	shootdomain "github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/testenv"
)

// forcePatch: with nothing to correct, a person sets the force annotation; the operator applies the shoot once
// anyway (its ShootApplied event says why) and removes the annotation (issue 6).
func (w *world) forcePatch(t *testing.T, rt *imv1.Runtime) {
	gen := w.runtime(t, rt.Name).Generation
	if n := w.runtimeEvents(t, rt.Name, "ShootApplied", "forced by annotation"); n != 0 {
		t.Fatalf("%d forced applies before the annotation was set", n)
	}
	w.annotateRuntime(t, rt.Name, imv1.AnnotationForcePatchReconciliation, "true")
	testenv.Eventually(t, stepTimeout, "the forced re-apply", func() (bool, string) {
		_, pending := w.runtime(t, rt.Name).Annotations[imv1.AnnotationForcePatchReconciliation]
		return !pending, "annotation still set"
	})
	// The event is written right after the apply and before the annotation is removed; the recorder sends it
	// asynchronously, hence the wait.
	testenv.Eventually(t, stepTimeout, "a ShootApplied event for the forced apply", func() (bool, string) {
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
	testenv.Eventually(t, stepTimeout, "the operator to see the suspend annotation", func() (bool, string) {
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
	testenv.Eventually(t, stepTimeout, "Gardener to reconcile the drifted shoot", func() (bool, string) {
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
	testenv.Eventually(t, stepTimeout, "runtime to report the suspended patch", func() (bool, string) {
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
	testenv.Eventually(t, stepTimeout+forceDeletionAfter, "force-deletion of shoot "+shootName, func() (bool, string) {
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
	testenv.Eventually(t, stepTimeout, "shoot "+shootName+" gone", func() (bool, string) {
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

// adoptPredecessor: a shoot the previous infrastructure manager created for a Runtime (its runtime-id annotation and
// the runtime-generation it applied, no managed-by label, an older worker maximum) is adopted when the operator sees
// the Runtime: labelled, with an event; no second shoot, no ShootNameTaken. The adopt-only mode (on by default) holds
// the first apply, which would change the maximum: the shoot keeps its spec until a person approves it. Nothing KEB
// reads changes meanwhile: the cluster runs the Runtime's generation, so the state is Ready and the hold is the
// condition AdoptionReviewRequired. When KEB changes the Runtime while it is held, the state says the change waits
// (Pending, reason AdoptionReviewRequired); the approval (force-patch annotation, once) applies it and the Runtime is
// Ready without the condition.
func (w *world) adoptPredecessor(t *testing.T, rt *imv1.Runtime) {
	ctx := context.Background()
	old := w.predecessorShoot(t, rt)
	// The previous manager records the Runtime generation it applied; a created Runtime has generation 1.
	old.Annotations[shootdomain.AnnotationRuntimeGeneration] = "1"
	old.Spec.Provider.Workers[0].Maximum++ // the Runtime asks for less than the predecessor had
	if err := w.garden.Create(ctx, old); err != nil {
		t.Fatalf("create the predecessor's shoot: %v", err)
	}
	uid := w.shoot(t, old.Name).UID

	if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	testenv.Eventually(t, provisionTimeout, "the adopted runtime Ready while its first apply waits for a review", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		return got != nil && got.Status.State == imv1.RuntimeStateReady && adoptionHeld(got), describe(got)
	})
	w.checkHeldUnchanged(t, old, uid)
	w.updateRuntime(t, rt.Name, func(r *imv1.Runtime) { // KEB changes the Runtime while it is held
		r.Spec.Security.Administrators = append(r.Spec.Security.Administrators, "keb.change@example.com")
	})
	testenv.Eventually(t, stepTimeout, "KEB's change to wait for the review", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		return got != nil && got.Status.State == imv1.RuntimeStatePending && got.Status.ObservedGeneration == got.Generation &&
			readyCondition(got).Reason == string(lifecycle.ReasonAdoptionReviewRequired) && adoptionHeld(got), describe(got)
	})
	w.checkHeldUnchanged(t, old, uid)
	w.annotateRuntime(t, rt.Name, imv1.AnnotationForcePatchReconciliation, "true")
	got := w.waitReady(t, rt.Name, provisionTimeout)
	if v := w.runtime(t, rt.Name).Annotations[imv1.AnnotationForcePatchReconciliation]; v != "" {
		t.Errorf("the approval was not consumed: force-patch %q", v)
	}
	s := w.shoot(t, old.Name)
	if s.UID != uid {
		t.Fatalf("shoot %s was replaced instead of adopted", old.Name)
	}
	if s.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
		t.Errorf("adopted shoot lacks the managed-by label: %v", s.Labels)
	}
	if adoptionHeld(got) {
		t.Errorf("approved and Ready, but condition %s is still reported", lifecycle.ConditionAdoptionReviewRequired)
	}
	w.checkShootMatchesGenerated(t, got)
	testenv.Eventually(t, stepTimeout, "a ShootAdopted event", func() (bool, string) {
		return w.runtimeEvents(t, rt.Name, "ShootAdopted", "") > 0, "no event"
	})
}

// adoptionHeld reports whether the Runtime reports the adoption review's hold (condition AdoptionReviewRequired true).
func adoptionHeld(rt *imv1.Runtime) bool {
	return meta.IsStatusConditionTrue(rt.Status.Conditions, lifecycle.ConditionAdoptionReviewRequired)
}

// checkHeldUnchanged fails unless the predecessor's shoot old is adopted (managed-by) and, held, keeps its UID and spec.
func (w *world) checkHeldUnchanged(t *testing.T, old *gardencorev1beta1.Shoot, uid types.UID) {
	t.Helper()
	held := w.shoot(t, old.Name)
	if held.UID != uid || gardener.TakenOver(held) || worker(held, firstPool).Maximum != old.Spec.Provider.Workers[0].Maximum ||
		held.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
		t.Fatalf("held shoot %s: taken over %v, maximum %d (had %d), managed-by %q; want adopted and unchanged", old.Name,
			gardener.TakenOver(held), worker(held, firstPool).Maximum, old.Spec.Provider.Workers[0].Maximum, held.Labels[wire.LabelManagedBy])
	}
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
