package gardenercluster

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestStaleCacheDoesNotRotateTwice: the cache still shows the force annotation that was already handled; the
// live read says it is gone, so Gardener is not called.
func TestStaleCacheDoesNotRotateTwice(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	stale := w.get(rid)
	stale.Annotations[imv1.AnnotationForceKubeconfigRotation] = "true"
	scheme, _ := scheme.New()
	w.r.Client = fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(stale).
		WithStatusSubresource(&imv1.GardenerCluster{}).Build()

	w.reconcile(rid)

	if n := w.issuer.TotalCalls(); n != 1 {
		t.Errorf("Gardener calls %d, want 1: a stale force annotation caused a second rotation", n)
	}
}

// laggingCache serves GardenerClusters from a snapshot, like an informer cache that has not seen the latest writes;
// writes go to the API server (the embedded client).
type laggingCache struct {
	client.Client
	snapshot *imv1.GardenerCluster
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if gc, ok := obj.(*imv1.GardenerCluster); ok && key == client.ObjectKeyFromObject(c.snapshot) {
		c.snapshot.DeepCopyInto(gc)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestStatusFromLaggingCacheKeepsReason: the reconcile that follows the first kubeconfig (triggered by the Secret
// write) sees a cached GardenerCluster without the status just written. It must neither call Gardener nor replace
// KubeconfigSecretCreated with KubeconfigSecretValid (seen for 37 of 100 clusters in the load harness before).
func TestStatusFromLaggingCacheKeepsReason(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	stale := w.get(rid) // has the finalizer (its event came first), but not the status
	stale.Status = imv1.GardenerClusterStatus{}
	rv := w.get(rid).ResourceVersion
	w.r.Client = laggingCache{Client: w.client, snapshot: stale}

	w.reconcile(rid)

	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonSecretCreated) {
		t.Errorf("reason %s, want %s", c.Reason, string(kubeconfig.ReasonSecretCreated))
	}
	if n := w.issuer.TotalCalls(); n != 1 {
		t.Errorf("Gardener calls %d, want 1", n)
	}
	if got := w.get(rid).ResourceVersion; got != rv {
		t.Errorf("status patched from a stale cache (resourceVersion %s -> %s)", rv, got)
	}
}
