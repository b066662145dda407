package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// CacheTransform trims the objects of the garden cache before they are stored (controller-runtime's
// cache.Options.DefaultTransform): at fleet size the cache holds every shoot of the project, and most of a shoot's
// bytes are fields the operator never reads.
//
//   - managedFields of every object: nothing reads them from the cache (the one reader, the hand-over of a new
//     shoot's fields to the apply manager, reads the shoot live);
//   - of a shoot's status only what Observe maps (generation, hibernation, advertised addresses, last operation
//     and errors) and the small identifying fields are kept; conditions, constraints, credentials rotation,
//     maintenance, networking and migration state go.
//
// A trimmed object is never written back: every write of a shoot is a server-side apply of the desired spec, a
// patch or an update of an object read live or returned by the API server (see shoots.go).
func CacheTransform(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		// nil, not empty: an empty list sent back in an update would reset the server's managedFields.
		obj.SetManagedFields(nil)
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
