package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// deleteRuntime deletes a Runtime as KEB does and waits until it is NotFound (issue 7: within 2 minutes), then checks
// that access is gone.
func (w *world) deleteRuntime(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	if err := w.kcp.Delete(context.Background(), &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: rt.Name}}); err != nil {
		t.Fatalf("delete runtime %s: %v", rt.Name, err)
	}
	testenv.Eventually(t, 2*time.Minute, "runtime "+rt.Name+" NotFound", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		return got == nil, describe(got)
	})
	if w.kubeconfig(t, rt.Name) != nil {
		t.Error("the kubeconfig Secret survived the runtime")
	}
	if w.gardenerClusterExists(t, rt.Name) {
		t.Error("the GardenerCluster survived the runtime")
	}
}

// waitHibernatedAndMarked waits until the shoot of a deleted runtime is hibernated and carries the deletion record.
func (w *world) waitHibernatedAndMarked(t *testing.T, rt *imv1.Runtime) *gardencorev1beta1.Shoot {
	t.Helper()
	var s *gardencorev1beta1.Shoot
	testenv.Eventually(t, stepTimeout, "shoot "+rt.Spec.Shoot.Name+" hibernated", func() (bool, string) {
		s = w.shoot(t, rt.Spec.Shoot.Name)
		if s == nil {
			t.Fatalf("shoot %s of runtime %s was deleted instead of hibernated", rt.Spec.Shoot.Name, rt.Name)
		}
		if s.DeletionTimestamp != nil {
			t.Fatalf("shoot %s is being deleted inside its window", s.Name)
		}
		return s.Status.IsHibernated && s.Annotations[gardener.AnnotationDeletionRuntimeID] == rt.Name,
			"hibernated=" + boolStr(s.Status.IsHibernated) + " record=" + s.Annotations[gardener.AnnotationDeletionDueAt]
	})
	if s.Spec.Hibernation == nil || !ptr.Deref(s.Spec.Hibernation.Enabled, false) {
		t.Errorf("shoot %s: hibernation not requested in the spec", s.Name)
	}
	return s
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// deletionAfterWindow: delete -> NotFound, access gone, shoot hibernated and kept; after the window the shoot is
// deleted with Gardener's confirmation annotation (issue 7, acceptance 1).
func (w *world) deletionAfterWindow(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	w.deleteRuntime(t, rt)
	s := w.waitHibernatedAndMarked(t, rt)
	due, err := time.Parse(time.RFC3339, s.Annotations[gardener.AnnotationDeletionDueAt])
	if err != nil {
		t.Fatalf("deletion due time on shoot: %v", err)
	}
	if marked, _ := time.Parse(time.RFC3339, s.Annotations[gardener.AnnotationDeletionMarkedAt]); due.Sub(marked) != awsWindow {
		t.Errorf("window recorded on the shoot: %s, want %s (plan aws)", due.Sub(marked), awsWindow)
	}
	uid := s.UID
	// The operator recorded the deletion in the KCP too (the reaper deletes nothing without it), under the shoot's
	// name in the Runtime's namespace, for this shoot object.
	var rec imv1.DeletionRecord
	if err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: shootName}, &rec); err != nil {
		t.Fatalf("the KCP's deletion record of shoot %s: %v", shootName, err)
	}
	if rec.Spec.RuntimeID != rt.Name || rec.Spec.ShootUID != string(uid) || rec.Spec.DueAt.Time.Before(due) {
		t.Errorf("the KCP's deletion record %+v; want runtime %s, shoot UID %s, due no earlier than %s", rec.Spec, rt.Name, uid, due)
	}
	// Slow down the simulated deletion so the deleting shoot can be inspected.
	w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationDuration, "3s")
	})
	var deleting *gardencorev1beta1.Shoot
	testenv.Eventually(t, awsWindow+stepTimeout, "shoot "+shootName+" deleted after its window", func() (bool, string) {
		cur := w.shoot(t, shootName)
		if cur != nil && cur.DeletionTimestamp != nil && deleting == nil {
			deleting = cur
		}
		return cur == nil || cur.UID != uid, "shoot still there"
	})
	if deleting == nil {
		t.Fatal("the shoot disappeared without being seen in deletion")
	}
	if deleting.Annotations[v1beta1constants.ConfirmationDeletion] != "true" {
		t.Errorf("shoot deleted without %s=true", v1beta1constants.ConfirmationDeletion)
	}
	if deleting.DeletionTimestamp.Time.Before(due.Add(-time.Second)) {
		t.Errorf("shoot deleted at %s, before its due time %s", deleting.DeletionTimestamp.Time, due)
	}
	testenv.Eventually(t, stepTimeout, "the KCP's deletion record of the gone shoot removed", func() (bool, string) {
		err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: shootName}, &imv1.DeletionRecord{})
		return apierrors.IsNotFound(err), "still there"
	})
}

// recoveryInWindow: a person restores the deleted runtime with the restore annotation on the shoot; the Runtime
// comes back Ready on the same shoot with a working kubeconfig (issue 7, acceptance 2).
func (w *world) recoveryInWindow(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	w.deleteRuntime(t, rt)
	s := w.waitHibernatedAndMarked(t, rt)
	uid := s.UID
	w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, wire.AnnotationRestore, "true")
	})
	got := w.waitReady(t, rt.Name, provisionTimeout)
	if got.Annotations[imv1.AnnotationRestored] != "true" {
		t.Errorf("restored Runtime lacks the restore annotation: %v", got.Annotations)
	}
	s = w.shoot(t, shootName)
	if s.UID != uid {
		t.Fatalf("restore gave a new shoot (uid %s, was %s)", s.UID, uid)
	}
	if s.Status.IsHibernated || (s.Spec.Hibernation != nil && ptr.Deref(s.Spec.Hibernation.Enabled, false)) {
		t.Errorf("restored shoot is still hibernated (spec %v, status %v)", s.Spec.Hibernation, s.Status.IsHibernated)
	}
	if _, ok := s.Annotations[gardener.AnnotationDeletionDueAt]; ok {
		t.Errorf("restored shoot still carries the deletion record: %v", s.Annotations)
	}
	if s.Annotations[v1beta1constants.ConfirmationDeletion] == "true" {
		t.Error("restored shoot carries the deletion confirmation")
	}
	kc := w.kubeconfig(t, rt.Name)
	if len(kc) == 0 {
		t.Fatal("restored runtime has no kubeconfig")
	}
	checkKubeconfigWorks(t, kc)
	w.checkAdminBindings(t, shootName, rt.Spec.Security.Administrators)
}

// shootNameReuse: KEB's unsuspension creates a new Runtime with the shoot name of a deleted one whose cluster waits
// for deletion. The new Runtime says what it waits for and gets a fresh cluster (issue 7, acceptance 3).
func (w *world) shootNameReuse(t *testing.T, old *imv1.Runtime) {
	shootName := old.Spec.Shoot.Name
	oldCA := checkKubeconfigWorks(t, w.kubeconfig(t, old.Name))
	w.deleteRuntime(t, old)
	oldShoot := w.waitHibernatedAndMarked(t, old)

	fresh := keb.WithIdentity(old, "7e1c5a2b-3d4f-4e6a-8b9c-0d1e2f3a4b5c", "")
	fresh.Labels["kyma-project.io/instance-id"] = old.Labels["kyma-project.io/instance-id"]
	if err := w.kcp.Create(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	sawWaitReason := false
	testenv.Eventually(t, provisionTimeout, "new runtime Ready on a fresh cluster", func() (bool, string) {
		rt := w.runtime(t, fresh.Name)
		if rt == nil {
			return false, "NotFound"
		}
		c := readyCondition(rt)
		if c.Reason == string(lifecycle.ReasonOldClusterPendingDeletion) || c.Reason == string(lifecycle.ReasonOldClusterDeleting) {
			sawWaitReason = true
			if rt.Status.State != imv1.RuntimeStatePending || !strings.Contains(c.Message, shootName) || !strings.Contains(c.Message, old.Name) {
				t.Errorf("while the old cluster goes: %s, want Pending naming shoot %s and runtime %s", describe(rt), shootName, old.Name)
			}
		}
		if s := w.shoot(t, shootName); s != nil && s.UID == oldShoot.UID && s.Annotations[gardener.AnnotationDeletionRuntimeID] == "" {
			t.Fatalf("the new runtime took over the old cluster: %v", s.Annotations)
		}
		return rt.Status.State == imv1.RuntimeStateReady, describe(rt)
	})
	if !sawWaitReason {
		t.Errorf("the new runtime never said it waits for the old cluster (reasons %s/%s)", lifecycle.ReasonOldClusterPendingDeletion, lifecycle.ReasonOldClusterDeleting)
	}
	s := w.shoot(t, shootName)
	if s.UID == oldShoot.UID {
		t.Fatal("the new runtime is Ready on the old shoot")
	}
	if s.Annotations["infrastructuremanager.kyma-project.io/runtime-id"] != fresh.Name {
		t.Errorf("new shoot belongs to %q, want %s", s.Annotations["infrastructuremanager.kyma-project.io/runtime-id"], fresh.Name)
	}
	newCA := checkKubeconfigWorks(t, w.kubeconfig(t, fresh.Name))
	if bytes.Equal(oldCA, newCA) {
		t.Error("the new runtime's kubeconfig trusts the old cluster's CA")
	}
	w.checkAdminBindings(t, shootName, fresh.Spec.Security.Administrators)
}

// emergencyBrake: with deletions frozen, neither the deleted trial runtime's shoot (window 0: normally deleted at
// once) nor an old cluster blocking a new Runtime's shoot name is deleted (issue 7, acceptance 4).
func (w *world) emergencyBrake(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	uid := w.shoot(t, shootName).UID
	w.deleteRuntime(t, rt)
	testenv.Eventually(t, stepTimeout, "shoot "+shootName+" marked", func() (bool, string) {
		s := w.shoot(t, shootName)
		return s != nil && s.Annotations[gardener.AnnotationDeletionRuntimeID] == rt.Name, "not marked"
	})
	successor := keb.WithIdentity(rt, "0b9d8c7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", "")
	if err := w.kcp.Create(context.Background(), successor); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, stepTimeout, "new runtime to report the brake", func() (bool, string) {
		got := w.runtime(t, successor.Name)
		return got != nil && readyCondition(got).Reason == string(lifecycle.ReasonDeletionsFrozen) &&
			got.Status.State == imv1.RuntimeStatePending, describe(got)
	})
	// Give the reaper time to act on the due shoot, had it been allowed to.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s := w.shoot(t, shootName)
		if s == nil || s.UID != uid || s.DeletionTimestamp != nil || s.Annotations[v1beta1constants.ConfirmationDeletion] == "true" {
			t.Fatalf("a shoot was deleted with the brake on: %+v", s)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The event is recorded with the status: it is there once the status says so (a failed list fails the test).
	var list corev1.EventList
	if err := w.kcp.List(context.Background(), &list, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == successor.Name && e.Reason == string(lifecycle.ReasonDeletionsFrozen) {
			return
		}
	}
	t.Errorf("no %s event for runtime %s", lifecycle.ReasonDeletionsFrozen, successor.Name)
}
