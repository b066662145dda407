package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// kebStepLimit is how long KEB's binding step may take after the Runtime is gone: "within minutes" (KEB itself
// would give up after an hour, which is the failure this guards against).
const kebStepLimit = 2 * time.Minute

// dedicatedBinding creates a CredentialsBinding as KEB's pool holds one assigned to a tenant (tenantName set) for the
// runtime's provider, referencing the catalogue's Secret secret, and points rt at it.
func (w *world) dedicatedBinding(t *testing.T, rt *imv1.Runtime, name, secret string) {
	t.Helper()
	ns := "garden-" + w.project
	b := &securityv1alpha1.CredentialsBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels: map[string]string{"tenantName": "ga-" + name, "hyperscalerType": rt.Spec.Shoot.Provider.Type}},
		Provider:       securityv1alpha1.CredentialsBindingProvider{Type: rt.Spec.Shoot.Provider.Type},
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret, Namespace: ns},
	}
	if err := w.garden.Create(context.Background(), b); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create credentials binding %s: %v", name, err)
	}
	rt.Spec.Shoot.SecretBindingName = name
}

func (w *world) bindingLabels(t testing.TB, name string) map[string]string {
	t.Helper()
	b := &securityv1alpha1.CredentialsBinding{}
	if err := w.garden.Get(context.Background(), client.ObjectKey{Namespace: "garden-" + w.project, Name: name}, b); err != nil {
		t.Fatalf("get credentials binding %s: %v", name, err)
	}
	return maps.Clone(b.Labels)
}

// kebFreesBinding runs KEB's credentials-binding step as KEB runs it after the Runtime is gone and checks that it
// finishes, without failing the deprovisioning, within kebStepLimit.
func (w *world) kebFreesBinding(t *testing.T, rt *imv1.Runtime) keb.FreeBindingResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kebStepLimit+time.Minute)
	defer cancel()
	res := keb.FreeCredentialsBinding(ctx, w.garden, "garden-"+w.project, rt.Spec.Shoot.SecretBindingName, rt.Spec.Shoot.Name, kebStepLimit)
	if res.Failed || res.Took > kebStepLimit {
		t.Fatalf("KEB's Free_Credentials_Binding_Step for runtime %s: failed=%v after %s (%s); want done within %s",
			rt.Name, res.Failed, res.Took, res.Reason, kebStepLimit)
	}
	t.Logf("KEB's binding step: %s after %s", res.Reason, res.Took.Round(time.Millisecond))
	return res
}

// checkReleasedNotPoolable: while the shoot waits, the binding is labelled dirty and keeps its tenant; KEB's pool
// cannot hand it to anyone (and the cleanup job skips it: the shoot names it).
func (w *world) checkReleasedNotPoolable(t *testing.T, rt *imv1.Runtime, before map[string]string) {
	t.Helper()
	got := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName)
	want := maps.Clone(before)
	want["dirty"] = "true"
	if !maps.Equal(got, want) {
		t.Errorf("binding %s while shoot %s waits: labels %v, want %v (dirty added, nothing else)", rt.Spec.Shoot.SecretBindingName,
			rt.Spec.Shoot.Name, got, want)
	}
	if keb.Poolable(got) {
		t.Errorf("binding %s is poolable while shoot %s exists: %v", rt.Spec.Shoot.SecretBindingName, rt.Spec.Shoot.Name, got)
	}
	var rec imv1.DeletionRecord
	if err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: rt.Spec.Shoot.Name}, &rec); err != nil {
		t.Fatalf("deletion record of %s: %v", rt.Spec.Shoot.Name, err)
	}
	if rec.Spec.CredentialsBinding != rt.Spec.Shoot.SecretBindingName || rec.Spec.BindingRelease != "Released" {
		t.Errorf("deletion record %+v; want the binding recorded as released by the operator", rec.Spec)
	}
}

// bindingReleasedThenRestored (issue 26 item 1): KEB's deprovisioning finishes at once while the cluster waits out
// its window; a restore takes the dirty label back, so the binding of the live cluster is not marked released;
// deleted again, KEB finishes at once again.
func (w *world) bindingReleasedThenRestored(t *testing.T, base *imv1.Runtime) {
	rt := freshRuntime(base, "b1d1a9c0-0000-4000-8000-0000000000a1", "c-b1d1a1")
	w.dedicatedBinding(t, rt, "azure-kyma-keb-restore", "azure-kyma-1")
	before := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName)
	w.provisionFresh(t, rt)
	w.deleteRuntime(t, rt)
	w.kebFreesBinding(t, rt)
	s := w.waitHibernatedAndMarked(t, rt)
	w.checkReleasedNotPoolable(t, rt, before)

	w.patchShoot(t, rt.Spec.Shoot.Name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, wire.AnnotationRestore, "true")
	})
	w.waitReady(t, rt.Name, provisionTimeout)
	if cur := w.shoot(t, rt.Spec.Shoot.Name); cur == nil || cur.UID != s.UID {
		t.Fatalf("the restore did not take the same shoot back")
	}
	if got := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName); !maps.Equal(got, before) {
		t.Errorf("binding of the restored cluster: %v, want %v (no dirty: the cleanup job wipes dirty bindings)", got, before)
	}

	w.deleteRuntime(t, rt)
	w.kebFreesBinding(t, rt)
	w.waitHibernatedAndMarked(t, rt)
	w.checkReleasedNotPoolable(t, rt, before)
}

// bindingReleasedUntilTheShootIsGone (issue 26 item 1): KEB's deprovisioning finishes at once; the binding stays
// out of the pool while the hibernated shoot exists; once the reaper has deleted the shoot, the binding is exactly
// as KEB leaves it for the account cleanup job: dirty, with its tenant.
func (w *world) bindingReleasedUntilTheShootIsGone(t *testing.T, base *imv1.Runtime) {
	rt := freshRuntime(base, "b1d1a9c0-0000-4000-8000-0000000000a2", "c-b1d1a2")
	w.dedicatedBinding(t, rt, "aws-kyma-keb-final", "aws-kyma-1")
	before := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName)
	w.provisionFresh(t, rt)
	w.deleteRuntime(t, rt)
	w.kebFreesBinding(t, rt)
	s := w.waitHibernatedAndMarked(t, rt)
	w.checkReleasedNotPoolable(t, rt, before)
	testenv.Eventually(t, awsWindow+provisionTimeout, "shoot "+rt.Spec.Shoot.Name+" gone after its window", func() (bool, string) {
		cur := w.shoot(t, rt.Spec.Shoot.Name)
		if cur != nil && cur.UID == s.UID {
			if l := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName); keb.Poolable(l) || l["dirty"] != "true" {
				t.Fatalf("binding while shoot %s exists: %v; want dirty and not poolable", cur.Name, l)
			}
			return false, "shoot still there"
		}
		return true, ""
	})
	testenv.Eventually(t, stepTimeout, "the KCP's deletion record of the gone shoot removed", func() (bool, string) {
		err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: rt.Spec.Shoot.Name}, &imv1.DeletionRecord{})
		return apierrors.IsNotFound(err), "still there"
	})
	want := maps.Clone(before)
	want["dirty"] = "true"
	if got := w.bindingLabels(t, rt.Spec.Shoot.SecretBindingName); !maps.Equal(got, want) {
		t.Errorf("binding after the shoot is gone: %v, want %v (as KEB leaves it: dirty, tenantName kept for the cleanup job)", got, want)
	}
}

// bindingReturnedToTheSibling (issue 39 item 1): two runtimes of one global account on one binding, as KEB assigns
// them; one is deleted. KEB's step finishes at once (the binding is dirty), the cluster waits out its window
// hibernated, and after the hold KEB's selector for the account, run by the garden's API server, finds the binding
// again while the sibling is Ready.
func (w *world) bindingReturnedToTheSibling(t *testing.T, base *imv1.Runtime) {
	ctx := context.Background()
	deleted := freshRuntime(base, "b1d1a9c0-0000-4000-8000-0000000000a3", "c-b1d1a3")
	sibling := freshRuntime(base, "b1d1a9c0-0000-4000-8000-0000000000a4", "c-b1d1a4")
	w.dedicatedBinding(t, deleted, "azure-kyma-keb-sibling", "azure-kyma-1")
	w.dedicatedBinding(t, sibling, "azure-kyma-keb-sibling", "azure-kyma-1")
	before := w.bindingLabels(t, "azure-kyma-keb-sibling")
	// KEB's selector for another runtime of the account (KEB:internal/subscriptions/label_selector.go).
	selector, err := labels.Parse("hyperscalerType=" + before["hyperscalerType"] + ",!euAccess,shared!=true,!dirty,tenantName=" + before["tenantName"])
	if err != nil {
		t.Fatal(err)
	}
	selected := func() []string {
		list := &securityv1alpha1.CredentialsBindingList{}
		if err := w.garden.List(ctx, list, client.InNamespace("garden-"+w.project), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			t.Fatalf("list credentials bindings %s: %v", selector, err)
		}
		var names []string
		for _, b := range list.Items {
			names = append(names, b.Name)
		}
		return names
	}
	for _, rt := range []*imv1.Runtime{deleted, sibling} {
		if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
			t.Fatalf("create runtime %s: %v", rt.Name, err)
		}
	}
	for _, rt := range []*imv1.Runtime{deleted, sibling} {
		w.waitReady(t, rt.Name, provisionTimeout)
	}
	if got := selected(); !slices.Contains(got, "azure-kyma-keb-sibling") {
		t.Fatalf("KEB's selector %s finds %v before the deletion; want the account's binding", selector, got)
	}

	w.deleteRuntime(t, deleted)
	if res := w.kebFreesBinding(t, deleted); res.Reason != "binding labelled dirty" {
		t.Errorf("KEB's step ended with %q; want done at once on the dirty label", res.Reason)
	}
	s := w.waitHibernatedAndMarked(t, deleted)

	testenv.Eventually(t, bindingHold+stepTimeout, "KEB's selector finds the binding again after the hold", func() (bool, string) {
		got := selected()
		return slices.Contains(got, "azure-kyma-keb-sibling"), fmt.Sprintf("selected %v, labels %v", got, w.bindingLabels(t, "azure-kyma-keb-sibling"))
	})
	if got := w.bindingLabels(t, "azure-kyma-keb-sibling"); !maps.Equal(got, before) {
		t.Errorf("binding after the hold: %v; want it as before the deletion %v (only the operator's dirty label came and went)", got, before)
	}
	// The label goes first and the record follows (a crash between the two is recovered: a Released record on a
	// binding without the label is recorded Returned on the next pass), so the record is waited for.
	testenv.Eventually(t, stepTimeout, "the deletion record says the binding was returned to the tenant", func() (bool, string) {
		var rec imv1.DeletionRecord
		if err := w.kcp.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: deleted.Spec.Shoot.Name}, &rec); err != nil {
			return false, fmt.Sprintf("deletion record of %s: %v", deleted.Spec.Shoot.Name, err)
		}
		return rec.Spec.BindingRelease == "Returned", fmt.Sprintf("deletion record %+v", rec.Spec)
	})
	if cur := w.shoot(t, deleted.Spec.Shoot.Name); cur == nil || cur.UID != s.UID || !cur.Status.IsHibernated || cur.DeletionTimestamp != nil {
		t.Errorf("the deleted runtime's cluster after the hold is not the same shoot, hibernated, waiting for its window (%v)", cur != nil)
	}
	if got := w.runtime(t, sibling.Name); got == nil || got.Status.State != imv1.RuntimeStateReady {
		t.Errorf("sibling runtime after the hold: %s; want Ready", describe(got))
	}
}
