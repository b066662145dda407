package gardenercluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func TestDeletionRemovesSecretThenFinalizer(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	if !hasSeries(t, w.m, rid) {
		t.Fatal("no expiration series after the kubeconfig was issued")
	}
	if err := w.client.Delete(context.Background(), w.get(rid)); err != nil {
		t.Fatal(err)
	}
	w.reconcile(rid)
	if w.store.Exists("kcp-system", "kubeconfig-"+rid) {
		t.Error("Secret still exists after the GardenerCluster was deleted")
	}
	var gc imv1.GardenerCluster
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "kcp-system", Name: rid}, &gc); err == nil {
		t.Errorf("GardenerCluster still exists with finalizers %v", gc.Finalizers)
	}
	if hasSeries(t, w.m, rid) {
		t.Errorf("expiration series of deleted cluster %s still reported", rid)
	}
}

// hasSeries reports whether the expiration gauge has a series for the runtime ID.
func hasSeries(t *testing.T, m *Metrics, runtimeID string) bool {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	m.ExpirationTimestamp.Collect(ch)
	close(ch)
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "runtime_id" && l.GetValue() == runtimeID {
				return true
			}
		}
	}
	return false
}

func TestDeletionFailureKeepsFinalizer(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	if err := w.client.Delete(context.Background(), w.get(rid)); err != nil {
		t.Fatal(err)
	}
	w.store.DeleteErr = errors.New("apiserver unavailable")
	if _, err := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: rid}}); err == nil {
		t.Fatal("Reconcile succeeded although the Secret could not be deleted")
	}
	gc := w.get(rid)
	if !slices.Contains(gc.Finalizers, Finalizer) {
		t.Error("finalizer removed although the Secret still exists")
	}
	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonFailedToDeleteSecret) {
		t.Errorf("reason %s, want %s", c.Reason, string(kubeconfig.ReasonFailedToDeleteSecret))
	}
}

func TestOrphanedSecretIsDeleted(t *testing.T) {
	w := newWorld(t)
	w.store.Put("kcp-system", "kubeconfig-"+rid, map[string][]byte{"config": []byte("kc")},
		map[string]string{wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: rid},
		map[string]string{kubeconfig.AnnotationOwner: "kcp-system/" + rid})
	w.store.Put("kcp-system", "kubeconfig-other", map[string][]byte{"config": []byte("kc")},
		map[string]string{wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: "other"}, nil)
	w.reconcile(rid)
	if w.store.Exists("kcp-system", "kubeconfig-"+rid) {
		t.Error("Secret of a GardenerCluster that does not exist was kept")
	}
	if !w.store.Exists("kcp-system", "kubeconfig-other") {
		t.Error("Secret of another GardenerCluster was deleted")
	}
}

func TestSecretOwnerMapping(t *testing.T) {
	cases := []struct {
		reason      string
		labels      map[string]string
		annotations map[string]string
		want        []string
	}{
		{reason: "owner annotation wins", labels: map[string]string{kubeconfig.LabelClusterName: "a"},
			annotations: map[string]string{kubeconfig.AnnotationOwner: "other-ns/b"}, want: []string{"other-ns/b"}},
		{reason: "older Secret: cluster-name label in the same namespace", labels: map[string]string{kubeconfig.LabelClusterName: "a"},
			want: []string{"kcp-system/a"}},
		{reason: "unrelated Secret", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			s := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "s", Labels: tc.labels, Annotations: tc.annotations}}
			var got []string
			for _, r := range secretOwner(context.Background(), s) {
				got = append(got, r.String())
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%s: got %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
