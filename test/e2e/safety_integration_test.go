package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// Safety scenarios of issue 12 on garden-in-a-box. They run inside TestRuntimeLifecycleIntegration: the in-process
// gardener-apiserver starts once per test binary.

// sameIDRecreateTakesClusterBack: a deleted Runtime applied again with the same ID (a KEB retry, a backup, a Velero
// restore of kcp-system), without any annotation, takes its hibernated cluster back: same shoot UID, woken up,
// Ready (defect 1: the cluster was deleted at once).
func (w *world) sameIDRecreateTakesClusterBack(t *testing.T, base *imv1.Runtime) {
	rt := freshRuntime(base, "5a1e1d00-0000-4000-8000-000000000001", "c-5a1e1d")
	rt.Labels[imv1.LabelBrokerPlanName] = "azure" // the default window (1 h): the test is well inside it
	w.provisionFresh(t, rt)
	backup := rt.DeepCopy()
	w.deleteRuntime(t, rt)
	marked := w.waitHibernatedAndMarked(t, rt)
	if err := w.kcp.Create(context.Background(), backup); err != nil {
		t.Fatalf("re-create runtime %s: %v", rt.Name, err)
	}
	w.waitReady(t, rt.Name, provisionTimeout)
	s := w.shoot(t, rt.Spec.Shoot.Name)
	if s.UID != marked.UID {
		t.Fatalf("the re-created runtime got a new shoot (uid %s, was %s): the old cluster was deleted", s.UID, marked.UID)
	}
	if _, ok := s.Annotations[gardener.AnnotationDeletionRuntimeID]; ok || ptr.Deref(s.Spec.Hibernation.Enabled, false) {
		t.Errorf("the taken-back shoot still carries the deletion record or hibernation: %v, %v", s.Annotations, s.Spec.Hibernation)
	}
	checkKubeconfigWorks(t, w.kubeconfig(t, rt.Name))
}

// staleStateNearTheDeadline: the window of a deleted runtime passes while deletions are stopped (the brake), a
// failed delete left Gardener's confirmation on the shoot, and then the runtime comes back at the moment the brake is
// lifted. Nothing may act on the stale view: the shoot is never deleted, the confirmation is removed with the record
// (defect 3).
func (w *world) staleStateNearTheDeadline(t *testing.T, base *imv1.Runtime) {
	rt := freshRuntime(base, "5a1e1d00-0000-4000-8000-000000000003", "c-5a1e1e")
	rt.Labels[imv1.LabelBrokerPlanName] = "aws" // 30 s window
	w.provisionFresh(t, rt)
	w.setBrake(t, true)
	backup := rt.DeepCopy()
	w.deleteRuntime(t, rt)
	marked := w.waitHibernatedAndMarked(t, rt)
	due, _ := time.Parse(time.RFC3339, marked.Annotations[gardener.AnnotationDeletionDueAt])
	w.patchShoot(t, rt.Spec.Shoot.Name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.ConfirmationDeletion, "true")
	})
	for time.Now().Before(due.Add(2 * time.Second)) {
		w.checkNotDeleted(t, rt.Spec.Shoot.Name, marked.UID)
		time.Sleep(500 * time.Millisecond)
	}
	if err := w.kcp.Create(context.Background(), backup); err != nil {
		t.Fatalf("re-create runtime %s: %v", rt.Name, err)
	}
	w.setBrake(t, false)
	testenv.Eventually(t, provisionTimeout, "runtime "+rt.Name+" Ready on its old shoot", func() (bool, string) {
		w.checkNotDeleted(t, rt.Spec.Shoot.Name, marked.UID)
		got := w.runtime(t, rt.Name)
		return got != nil && got.Status.State == imv1.RuntimeStateReady, describe(got)
	})
	s := w.shoot(t, rt.Spec.Shoot.Name)
	if s.Annotations[v1beta1constants.ConfirmationDeletion] == "true" {
		t.Error("the deletion confirmation a failed delete left survived the restore")
	}
	// Give the reaper a moment on the restored shoot, had it kept a stale decision.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w.checkNotDeleted(t, rt.Spec.Shoot.Name, marked.UID)
		time.Sleep(500 * time.Millisecond)
	}
}

func (w *world) checkNotDeleted(t *testing.T, name string, uid types.UID) {
	t.Helper()
	s := w.shoot(t, name)
	if s == nil || s.UID != uid || s.DeletionTimestamp != nil {
		t.Fatalf("shoot %s was deleted (now %v)", name, s)
	}
}

// setBrake sets or lifts the emergency brake without a restart (the deletion guard ConfigMap).
func (w *world) setBrake(t *testing.T, on bool) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: kcpNamespace, Name: kube.GuardConfigMapName}
	err := w.kcp.Get(context.Background(), key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: kube.GuardConfigMapName},
			Data: map[string]string{kube.KeyFrozen: boolStr(on)}}
		if err := w.kcp.Create(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[kube.KeyFrozen] = boolStr(on)
	if err := w.kcp.Patch(context.Background(), cm, patch); err != nil {
		t.Fatal(err)
	}
}

// confusedDeputy: a GardenerCluster naming another runtime's kubeconfig Secret leaves it byte-identical and gets an
// error condition; one naming a Secret in another namespace is rejected at admission; deleting the first leaves the
// victim's Secret in place (defect 7).
func (w *world) confusedDeputy(t *testing.T, victim *imv1.Runtime) {
	ctx := context.Background()
	w.installAdmissionPolicies(t)
	secretName := kubeconfig.SecretName(victim.Name)
	before := w.secret(t, secretName)
	if before == nil || len(before.Data["config"]) == 0 {
		t.Fatalf("the victim %s has no kubeconfig", victim.Name)
	}
	// Byte-identical, unless the victim's own GardenerCluster rotated it meanwhile (then it still owns it).
	unchanged := func(what string) {
		t.Helper()
		after := w.secret(t, secretName)
		switch {
		case after == nil:
			t.Fatalf("%s: the victim's kubeconfig Secret was deleted", what)
		case after.Annotations[kubeconfig.AnnotationOwner] != kcpNamespace+"/"+victim.Name:
			t.Fatalf("%s: the victim's Secret now belongs to %q", what, after.Annotations[kubeconfig.AnnotationOwner])
		case after.Annotations[kubeconfig.AnnotationLastSync] == before.Annotations[kubeconfig.AnnotationLastSync] &&
			!bytes.Equal(after.Data["config"], before.Data["config"]):
			t.Fatalf("%s: the victim's kubeconfig was changed by another GardenerCluster", what)
		}
	}
	hostile := &imv1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "4057113e-0000-4000-8000-000000000007", Namespace: kcpNamespace},
		Spec: imv1.GardenerClusterSpec{Shoot: imv1.Shoot{Name: victim.Spec.Shoot.Name},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: secretName, Namespace: kcpNamespace, Key: "config"}}},
	}
	if err := w.kcp.Create(ctx, hostile); err != nil {
		t.Fatalf("create the hostile GardenerCluster: %v", err)
	}
	testenv.Eventually(t, stepTimeout, "the hostile GardenerCluster refused", func() (bool, string) {
		gc := &imv1.GardenerCluster{}
		if err := w.kcp.Get(ctx, client.ObjectKeyFromObject(hostile), gc); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement)
		if c == nil {
			return false, "no condition"
		}
		return c.Reason == string(kubeconfig.ReasonSecretNotOwned) || c.Reason == string(kubeconfig.ReasonShootNotOfRuntime),
			c.Reason + ": " + c.Message
	})
	unchanged("after the hostile GardenerCluster was reconciled")
	var err error
	attempt := 0
	testenv.Eventually(t, 30*time.Second, "a GardenerCluster naming another namespace rejected at admission", func() (bool, string) {
		// A fresh name per attempt: an accepted one carries a finalizer, and re-using its name would be refused
		// with "object is being deleted" rather than judged by the policy.
		attempt++
		elsewhere := hostile.DeepCopy()
		elsewhere.ResourceVersion = ""
		elsewhere.Name = fmt.Sprintf("4057113e-0000-4000-8000-%012d", 100+attempt)
		elsewhere.Spec.Kubeconfig.Secret.Namespace = "default"
		err = w.kcp.Create(ctx, elsewhere)
		if err == nil {
			_ = w.kcp.Delete(ctx, elsewhere)
			return false, "accepted (the policy may not be active yet)"
		}
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), err.Error()
	})
	if !strings.Contains(err.Error(), "spec.kubeconfig.secret.namespace") {
		t.Errorf("the rejection does not name the field: %v", err)
	}
	if err := w.kcp.Delete(ctx, hostile); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, stepTimeout, "the hostile GardenerCluster gone", func() (bool, string) {
		err := w.kcp.Get(ctx, client.ObjectKeyFromObject(hostile), &imv1.GardenerCluster{})
		return apierrors.IsNotFound(err), "still there"
	})
	unchanged("after the hostile GardenerCluster was deleted")
	if got := readyCondition(w.runtime(t, victim.Name)); got.Reason != string(lifecycle.ReasonReady) {
		t.Errorf("the victim runtime is no longer Ready: %s", got.Reason)
	}
}

func (w *world) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// installAdmissionPolicies applies config/admission to the KCP, as `kubectl apply -k config/default` does.
func (w *world) installAdmissionPolicies(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "admission", "gardenercluster_secret_namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			break
		}
		u := &unstructured.Unstructured{Object: obj}
		if err := w.kcp.Create(context.Background(), u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("install %s: %v", u.GetName(), err)
		}
	}
}
