package skeleton

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
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
