package skeleton

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// IgnoreStatusOnly is the predicate of a controller's own objects that drops the updates which change nothing a
// reconcile reads besides the status, such as the controller's own status patches: it lets through every create,
// delete and generic event and the updates that change the generation (the spec), the annotations, the deletion
// timestamp or the number of finalizers, and the labels when labels is true (false: label-only updates are
// dropped too, for a reconcile that reads no label).
func IgnoreStatusOnly(labels bool) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			(labels && !maps.Equal(o.GetLabels(), n.GetLabels())) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			len(o.GetFinalizers()) != len(n.GetFinalizers())
	}}
}
