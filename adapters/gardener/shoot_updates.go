package gardener

import (
	"reflect"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShootUpdates tells the controllers' shoot watches what an update event of the garden cache changed. The cache
// keeps of a shoot only what the controllers read (CacheTransform), so whatever differs between the two cached
// copies, apart from the resourceVersion and the cache's own records, is read by someone: the classification needs
// no list of fields that could fall behind the code. Gardener writes a shoot's status tens of times an hour (the
// care controller's conditions and constraints, the credentials rotation, ...); those writes change nothing the
// cache keeps and wake no controller.
type ShootUpdates struct{}

// Changed reports whether the update from old to new changed anything the controllers read, and progressOnly when
// that is only the progress of an operation still running: the last operation's progress, description and time
// while its type is the same and its state stays Processing, nothing else. A resync (the same resourceVersion)
// counts as a change: it is the informer's periodic safety net.
func (ShootUpdates) Changed(old, new *gardencorev1beta1.Shoot) (changed, progressOnly bool) {
	if old == nil || new == nil || old.ResourceVersion == new.ResourceVersion {
		return true, false
	}
	if !sameCachedMeta(&old.ObjectMeta, &new.ObjectMeta) || (specMayChangeAlone(old, new) && !reflect.DeepEqual(old.Spec, new.Spec)) {
		return true, false
	}
	oldOp, newOp := old.Status.LastOperation, new.Status.LastOperation
	if oldOp == nil || newOp == nil || reflect.DeepEqual(oldOp, newOp) {
		return !reflect.DeepEqual(old.Status, new.Status), false
	}
	// The operation changed: progress only when everything else of the status is the same.
	running := oldOp.Type == newOp.Type && oldOp.State == gardencorev1beta1.LastOperationStateProcessing &&
		newOp.State == gardencorev1beta1.LastOperationStateProcessing
	rest := new.Status
	rest.LastOperation = oldOp
	return true, running && reflect.DeepEqual(old.Status, rest)
}

// specMayChangeAlone reports whether the spec may have changed although the generation did not (sameCachedMeta
// compares it). Gardener's API server raises the generation with every change of the spec (update and binding),
// except on a shoot with spec.maintenance.confineSpecUpdateRollout, where only hibernation does; a trimmed copy does
// not show that field, so its (small) spec is compared too. Comparing every whole spec cost about 80 µs an event
// on the build machine, the whole classification takes about 14 µs without (BenchmarkShootUpdates). Comparisons are
// reflect.DeepEqual: equal there is equal in meaning; the reverse (the same value decoded differently) would only
// wake a controller once more.
func specMayChangeAlone(old, new *gardencorev1beta1.Shoot) bool {
	confined := func(s *gardencorev1beta1.Shoot) bool {
		_, trimmed := s.Annotations[annotationCachedSpec]
		m := s.Spec.Maintenance
		return trimmed || (m != nil && m.ConfineSpecUpdateRollout != nil && *m.ConfineSpecUpdateRollout)
	}
	return confined(old) || confined(new)
}

// sameCachedMeta compares what the cache keeps of two versions of a shoot's metadata, apart from the
// resourceVersion and the cache's own record of a trimmed spec, whose value names the version (its presence is
// compared: a shoot the operator applies is cached whole from then on).
func sameCachedMeta(a, b *metav1.ObjectMeta) bool {
	if a.UID != b.UID || a.Generation != b.Generation || !reflect.DeepEqual(a.DeletionTimestamp, b.DeletionTimestamp) ||
		!reflect.DeepEqual(a.DeletionGracePeriodSeconds, b.DeletionGracePeriodSeconds) ||
		!stringMapsEqual(a.Labels, b.Labels, "") || !stringMapsEqual(a.Annotations, b.Annotations, annotationCachedSpec) {
		return false
	}
	return reflect.DeepEqual(a.Finalizers, b.Finalizers) && reflect.DeepEqual(a.OwnerReferences, b.OwnerReferences) &&
		reflect.DeepEqual(a.ManagedFields, b.ManagedFields)
}

// stringMapsEqual compares two maps; of the key presenceOnly ("" for none) only the presence.
func stringMapsEqual(a, b map[string]string, presenceOnly string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || (va != vb && k != presenceOnly) {
			return false
		}
	}
	return true
}
