package skeleton

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
