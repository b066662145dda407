package skeleton_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// laggingCache makes the reconciler's reads return the object as it was before the last status patch, for the next
// lag reads after that patch: a cache whose watch has not delivered the write yet.
type laggingCache struct {
	mu     sync.Mutex
	lag    int
	before *imv1.GardenerCluster
	reads  int // reads answered since the last patch
	copies int // of those, reads that asked the cache for a deep copy
}

func (l *laggingCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.reads++
			if o := (&client.GetOptions{}).ApplyOptions(opts); l.before != nil && (o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy) {
				l.copies++
			}
			if gc, ok := obj.(*imv1.GardenerCluster); ok && l.before != nil && l.reads <= l.lag {
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

// With AwaitStatus, a reconcile that wrote the status returns only once the cache shows the write: the next
// reconcile decides on it. Without, it returns at once.
func TestAwaitStatusWaitsUntilTheCacheShowsTheWrite(t *testing.T) {
	for _, await := range []time.Duration{0, 2 * time.Second} {
		w := newWorld(t, cluster(nil))
		lag := &laggingCache{lag: 3}
		w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), lag.funcs())
		w.r.AwaitStatus = await
		_, err := w.reconcile(t)
		require.NoError(t, err)
		lag.mu.Lock()
		reads, copies := lag.reads, lag.copies
		lag.mu.Unlock()
		if await == 0 {
			require.Zero(t, reads, "without AwaitStatus the cache is not read after the status patch")
			continue
		}
		require.Equal(t, lag.lag+1, reads, "the reconcile returned before the cache showed its status write")
		require.Zero(t, copies, "the wait reads only the resourceVersion: no deep copy of the object per poll")
	}
}

// A cache that never catches up holds the reconcile no longer than AwaitStatus and is no error.
func TestAwaitStatusIsBounded(t *testing.T) {
	w := newWorld(t, cluster(nil))
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), (&laggingCache{lag: 1 << 30}).funcs())
	w.r.AwaitStatus = 50 * time.Millisecond
	start := time.Now()
	_, err := w.reconcile(t)
	require.NoError(t, err)
	require.Less(t, time.Since(start), time.Second)
	require.Equal(t, imv1.GardenerClusterState("c-1@2026-01-02T03:04:05Z"), w.get(t).Status.State)
}
