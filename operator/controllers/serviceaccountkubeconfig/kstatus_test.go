package serviceaccountkubeconfig

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// kstatus returns which of kstatus' abnormal-true conditions the object holds, and Stalled's reason.
func kstatus(s *imv1.ServiceAccountKubeconfig) (reconciling, stalled bool, reason string) {
	r := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionReconciling)
	st := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionStalled)
	if st != nil {
		reason = st.Reason
	}
	return r != nil && r.Status == metav1.ConditionTrue, st != nil && st.Status == metav1.ConditionTrue, reason
}

// TestRefusalIsStalled: a refused request is kstatus Stalled (a health check fails at once instead of waiting for its
// timeout), one waiting for its runtime Reconciling, a Ready one neither; a fixed request drops Stalled.
func TestRefusalIsStalled(t *testing.T) {
	s := sample()
	s.Spec.Rules = []imv1.AccessRule{{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}}}
	w := newWorld(t, s)
	w.reconcile()
	if rec, stalled, reason := kstatus(w.get()); rec || !stalled || reason != sakubeconfig.ReasonEscalationRefused {
		t.Errorf("refused: Reconciling %v, Stalled %v (%s); want Stalled with EscalationRefused", rec, stalled, reason)
	}

	fixed := w.get()
	fixed.Spec.Rules[0].Resources = []string{"nodes"}
	fixed.Generation = 2
	if err := w.client.Update(t.Context(), fixed); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if rec, stalled, _ := kstatus(w.get()); rec || stalled {
		t.Errorf("ready: Reconciling %v, Stalled %v; want neither", rec, stalled)
	}

	v := newWorld(t, sample())
	v.ids.DropKubeconfig(ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"})
	v.reconcile()
	if rec, stalled, _ := kstatus(v.get()); !rec || stalled {
		t.Errorf("waiting for the runtime: Reconciling %v, Stalled %v; want Reconciling", rec, stalled)
	}
}
