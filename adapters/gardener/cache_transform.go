package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CacheTransform trims the objects of the garden cache before they are stored (controller-runtime's
// cache.Options.DefaultTransform): at fleet size the cache holds every shoot of the project, and most of a shoot's
// bytes are fields the operator never reads.
//
//   - managedFields of every object but the bare entry saying the operator applied it (appliedByOperator reads that from
//     the cache; the hand-over of a new shoot's fields to the apply manager reads the shoot live);
//   - of a shoot's status only what Observe maps (generation, hibernation, advertised addresses, last operation
//     and errors) and the small identifying fields are kept; conditions, constraints, credentials rotation,
//     maintenance, networking and migration state go.
//
// A trimmed object is never written back: every write of a shoot is a server-side apply of the desired spec, a
// patch or an update of an object read live or returned by the API server (see shoots.go).
func CacheTransform(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		// Only the fact that the operator applied the object stays (appliedByOperator decides between a full apply and
		// marks only on it; without it a removal from the spec would never be applied), without its field set.
		var kept []metav1.ManagedFieldsEntry // nil, not empty, when none: never an empty list
		for _, m := range obj.GetManagedFields() {
			if m.Manager == FieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
				m.FieldsV1 = nil
				kept = append(kept, m)
			}
		}
		obj.SetManagedFields(kept)
	}
	if s, ok := in.(*gardencorev1beta1.Shoot); ok {
		st := s.Status
		s.Status = gardencorev1beta1.ShootStatus{
			Gardener: st.Gardener, IsHibernated: st.IsHibernated, LastOperation: st.LastOperation, LastErrors: st.LastErrors,
			ObservedGeneration: st.ObservedGeneration, SeedName: st.SeedName, TechnicalID: st.TechnicalID, UID: st.UID,
			AdvertisedAddresses: st.AdvertisedAddresses,
		}
	}
	return in, nil
}
