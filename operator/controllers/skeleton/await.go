package skeleton

import (
	"context"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// awaitCached waits until Client's cache holds the object at resourceVersion written (or a later one), at most
// AwaitStatus. A cache that does not catch up is no error: the next reconcile then works on an older status, as
// without the wait. Each poll reads only the resourceVersion, so it takes the cached object without a deep copy
// (a copy of a Runtime per poll was a measurable part of a status write's CPU); nothing of it is written.
func (r *Reconciler[O, Q, R]) awaitCached(ctx context.Context, key client.ObjectKey, written string) {
	noCopy := &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)}
	_ = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, r.AwaitStatus, true, func(ctx context.Context) (bool, error) {
		obj := r.New()
		if err := r.Client.Get(ctx, key, obj, noCopy); err != nil {
			return false, nil //nolint:nilerr // not readable from the cache yet: keep waiting until the bound
		}
		return atLeast(obj.GetResourceVersion(), written), nil
	})
}

// atLeast reports whether resourceVersion have is written or came after it. Resource versions are opaque; those of
// etcd-backed API servers are increasing integers, which is what a later version is recognised by.
func atLeast(have, written string) bool {
	if have == written {
		return true
	}
	h, err1 := strconv.ParseUint(have, 10, 64)
	w, err2 := strconv.ParseUint(written, 10, 64)
	return err1 == nil && err2 == nil && h > w
}
