package skeleton

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// StatusChanged reports whether the Status fields of two objects of the same kind differ (semantically: equal
// quantities and times are equal). Objects without a Status field never differ, so their status is never patched.
func StatusChanged(before, after client.Object) bool {
	b, a := statusOf(before), statusOf(after)
	if !b.IsValid() || !a.IsValid() {
		return false
	}
	return !equality.Semantic.DeepEqual(b.Interface(), a.Interface())
}

// statusOf returns the Status field of a kubebuilder-style object (a pointer to a struct with a Status field).
func statusOf(o client.Object) reflect.Value {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}

func hasFinalizer(o client.Object, finalizer string) bool {
	return slices.Contains(o.GetFinalizers(), finalizer)
}

// isNil reports whether o is a nil pointer (the zero value of a pointer type parameter).
func isNil(o client.Object) bool {
	v := reflect.ValueOf(o)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}

// statusMergeFrom is the merge patch of the status subresource from before to the object it is applied with: what
// client.MergeFrom(before) sends to the /status endpoint, which takes nothing but the status, computed from the two
// statuses instead of the two whole objects (a Runtime's spec is encoded and compared on every status write
// otherwise: TestStatusPatchIsTheMergePatchOfTheStatus). Like client.MergeFrom it carries no resourceVersion.
type statusMergeFrom struct{ before client.Object }

func (p statusMergeFrom) Type() types.PatchType { return types.MergePatchType }

func (p statusMergeFrom) Data(obj client.Object) ([]byte, error) {
	b, a := statusOf(p.before), statusOf(obj)
	if !b.IsValid() || !a.IsValid() {
		return client.MergeFrom(p.before).Data(obj)
	}
	before, err := json.Marshal(b.Interface())
	if err != nil {
		return nil, fmt.Errorf("encode the status before: %w", err)
	}
	after, err := json.Marshal(a.Interface())
	if err != nil {
		return nil, fmt.Errorf("encode the status: %w", err)
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, fmt.Errorf("merge patch of the status: %w", err)
	}
	return json.Marshal(map[string]json.RawMessage{"status": patch})
}

// patchStatus sends the status patch of obj and takes only the metadata of the answer: the API server returns the
// object's metadata (PartialObjectMetadata, protobuf), not the whole object, and obj gets the new resourceVersion and
// field ownership from it. The whole answer was decoded (JSON, a custom resource) on every status write only for
// those two fields: about a quarter of a millisecond per write of a Runtime at fleet size (docs/operations/scale.md,
// tenth pass), and the garbage of a whole object. The status obj holds is what was sent; nothing reads the server's
// copy of it after the write.
func (r *Reconciler[O, Q, R]) patchStatus(ctx context.Context, obj O, patch statusMergeFrom) error {
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	if err != nil {
		return fmt.Errorf("kind of %T: %w", obj, err)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	written := &metav1.PartialObjectMetadata{}
	written.SetGroupVersionKind(gvk)
	written.Namespace, written.Name = obj.GetNamespace(), obj.GetName()
	if err := r.Client.Status().Patch(ctx, written, client.RawPatch(patch.Type(), data)); err != nil {
		return err
	}
	obj.SetResourceVersion(written.ResourceVersion)
	obj.SetManagedFields(written.ManagedFields)
	return nil
}
