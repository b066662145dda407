// Package skeleton holds what every controller of the operator does the same way: the generic Reconciler (get,
// finalizer, clock, events, one status patch only when it changed, the controller-runtime result) around the hooks
// a controller supplies (observe, act, status, finalize), finalizers that neither conflict nor drop others'
// entries, and clearing an annotation without a resourceVersion.
package skeleton

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnsureFinalizer adds finalizer to obj (and to the object in the API server) unless it is there. A JSON patch
// appends to the list without a resourceVersion, so it neither conflicts with other writers nor drops finalizers
// others add meanwhile.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if slices.Contains(obj.GetFinalizers(), finalizer) {
		return nil
	}
	op := fmt.Sprintf(`[{"op":"add","path":"/metadata/finalizers/-","value":%q}]`, finalizer)
	if len(obj.GetFinalizers()) == 0 {
		op = fmt.Sprintf(`[{"op":"add","path":"/metadata/finalizers","value":[%q]}]`, finalizer)
	}
	target, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("add finalizer to %s: not a client object", obj.GetName())
	}
	if err := c.Patch(ctx, target, client.RawPatch(types.JSONPatchType, []byte(op))); err != nil {
		return fmt.Errorf("add finalizer to %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
	return nil
}

// RemoveFinalizer removes exactly finalizer: it reads the list from the API server (live) and patches "test that
// entry i is ours, then remove entry i", so a stale cache can neither resurrect finalizers others removed nor remove
// theirs. A missing object or finalizer is success.
func RemoveFinalizer(ctx context.Context, c client.Client, live client.Reader, obj client.Object, finalizer string) error {
	return RemoveFinalizers(ctx, c, live, obj, finalizer)
}

// RemoveFinalizers removes exactly the named finalizers that are present, in one write, as RemoveFinalizer does
// for one: a crash cannot leave some of them behind, and finalizers not named are never touched.
func RemoveFinalizers(ctx context.Context, c client.Client, live client.Reader, obj client.Object, finalizers ...string) error {
	fresh, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("remove finalizer from %s: not a client object", obj.GetName())
	}
	if err := live.Get(ctx, client.ObjectKeyFromObject(obj), fresh); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	var ops []string
	list := fresh.GetFinalizers()
	// From the last entry back: removing one does not shift the indexes of the entries still to be removed.
	for i := len(list) - 1; i >= 0; i-- {
		if slices.Contains(finalizers, list[i]) {
			ops = append(ops, fmt.Sprintf(`{"op":"test","path":"/metadata/finalizers/%[1]d","value":%[2]q},{"op":"remove","path":"/metadata/finalizers/%[1]d"}`,
				i, list[i]))
		}
	}
	if len(ops) == 0 {
		return nil
	}
	op := "[" + strings.Join(ops, ",") + "]"
	if err := c.Patch(ctx, fresh, client.RawPatch(types.JSONPatchType, []byte(op))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizers %v from %s/%s: %w", finalizers, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// ClearAnnotation removes key from obj with a merge patch that names only that key: it needs no resourceVersion
// and leaves every other field alone.
func ClearAnnotation(ctx context.Context, c client.Client, obj client.Object, key string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, key)
	target, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("clear annotation of %s: not a client object", obj.GetName())
	}
	if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("remove annotation %s from %s/%s: %w", key, obj.GetNamespace(), obj.GetName(), err)
	}
	a := obj.GetAnnotations()
	delete(a, key)
	obj.SetAnnotations(a)
	return nil
}
