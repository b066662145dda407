package gardenercluster

import (
	"context"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// statusLag answers the reconciler's cached reads of a GardenerCluster with the object as it was before the
// last status patch, for the next lag reads after it: a cache whose watch has not delivered the write yet.
type statusLag struct {
	mu     sync.Mutex
	lag    int
	before *imv1.GardenerCluster
	reads  int
}

func (l *statusLag) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			if gc, ok := obj.(*imv1.GardenerCluster); ok && l.before != nil && l.reads < l.lag {
				l.reads++
				l.before.DeepCopyInto(gc)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			before := &imv1.GardenerCluster{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), before); err != nil {
				return err
			}
			l.before, l.reads = before, 0
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}

// liveReads counts the reads of GardenerClusters from the API server.
type liveReads struct {
	client.Reader
	mu  sync.Mutex
	gcs int
}

func (l *liveReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*imv1.GardenerCluster); ok {
		l.mu.Lock()
		l.gcs++
		l.mu.Unlock()
	}
	return l.Reader.Get(ctx, key, obj, opts...)
}

// TestTheReconcileAfterTheFirstKubeconfigReadsNothingLive (issue 29): the Secret's event brings a reconcile right
// after the first kubeconfig was written. The reconcile that wrote it waits until the cache shows its status
// (AwaitStatus), so the next one sees the recorded success and does not confirm the GardenerCluster live again.
func TestTheReconcileAfterTheFirstKubeconfigReadsNothingLive(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	lag := &statusLag{lag: 3}
	w.r.Client = interceptor.NewClient(w.client.(client.WithWatch), lag.funcs())
	live := &liveReads{Reader: w.client}
	w.r.Live = live
	w.reconcile(rid)
	if w.issuer.TotalCalls() != 1 || !succeeded(w.get(rid)) {
		t.Fatalf("first kubeconfig: %d issues, status %+v", w.issuer.TotalCalls(), w.get(rid).Status)
	}
	first := live.gcs
	w.reconcile(rid)
	if got := live.gcs - first; got != 0 {
		t.Errorf("the reconcile after the first kubeconfig read the GardenerCluster live %d times, want 0", got)
	}
	if w.issuer.TotalCalls() != 1 {
		t.Errorf("issues: %d, want 1", w.issuer.TotalCalls())
	}
}
