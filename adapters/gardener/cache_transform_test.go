package gardener

import (
	"reflect"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/adapters/gardener/translate"
)

// fullShoot is a golden shoot with the status and managedFields a real garden gives it.
func fullShoot(t *testing.T) *gardencorev1beta1.Shoot {
	t.Helper()
	shoots, err := translate.LoadShoots("testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	s := shoots["aws-additional-workers-ha"].DeepCopy()
	if s == nil {
		t.Fatal("golden shoot aws-additional-workers-ha missing")
	}
	at := metav1.NewTime(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gardenlet", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: &at}}
	cond := func(typ string) gardencorev1beta1.Condition {
		return gardencorev1beta1.Condition{Type: gardencorev1beta1.ConditionType(typ), Status: gardencorev1beta1.ConditionTrue,
			LastTransitionTime: at, LastUpdateTime: at, Reason: "Healthy", Message: "All is well with " + typ}
	}
	s.Generation = 4
	s.Status = gardencorev1beta1.ShootStatus{
		Conditions:         []gardencorev1beta1.Condition{cond("APIServerAvailable"), cond("ControlPlaneHealthy"), cond("EveryNodeReady")},
		Constraints:        []gardencorev1beta1.Condition{cond("HibernationPossible")},
		IsHibernated:       true,
		ObservedGeneration: 3,
		LastOperation: &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
			State: gardencorev1beta1.LastOperationStateError, Progress: 40, LastUpdateTime: at, Description: "reconciling"},
		LastErrors: []gardencorev1beta1.LastError{{Description: "quota exceeded",
			Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}}},
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api.c-1.example"}},
		SeedName:            ptr.To("aws-eu1"), TechnicalID: "shoot--kyma--c-1", UID: "uid-c-1",
		Credentials:     &gardencorev1beta1.ShootCredentials{},
		LastMaintenance: &gardencorev1beta1.LastMaintenance{Description: "updated images", State: gardencorev1beta1.LastOperationStateSucceeded},
	}
	return s
}

// TestCacheTransformKeepsWhatTheOperatorReads: a cached shoot maps to the same observation and the same current
// spec with and without the trimming, and loses its managedFields and the status it is never read for.
func TestCacheTransformKeepsWhatTheOperatorReads(t *testing.T) {
	full := fullShoot(t)
	out, err := CacheTransform(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	trimmed := out.(*gardencorev1beta1.Shoot)
	if !reflect.DeepEqual(Observe(full), Observe(trimmed)) {
		t.Errorf("the observation changed:\n full:    %+v\n trimmed: %+v", Observe(full), Observe(trimmed))
	}
	curFull, err1 := translate.CurrentFromShoot(full)
	curTrimmed, err2 := translate.CurrentFromShoot(trimmed)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(curFull, curTrimmed) {
		t.Errorf("the current spec changed (%v, %v):\n full:    %+v\n trimmed: %+v", err1, err2, curFull, curTrimmed)
	}
	if !reflect.DeepEqual(full.Spec, trimmed.Spec) || !reflect.DeepEqual(full.Labels, trimmed.Labels) ||
		!reflect.DeepEqual(full.Annotations, trimmed.Annotations) {
		t.Error("spec, labels or annotations changed: the spec is what drift correction compares")
	}
	// appliedByOperator decides between a full apply and marks only: a removal from the spec must still be applied.
	if !appliedByOperator(full) || !appliedByOperator(trimmed) {
		t.Errorf("the record that the operator applied the shoot is lost: %+v", trimmed.ManagedFields)
	}
	for _, m := range trimmed.ManagedFields {
		if m.Manager != FieldManager || m.FieldsV1 != nil {
			t.Errorf("kept managedFields entry %s (%d bytes of fields)", m.Manager, len(m.FieldsV1.GetRawBytes()))
		}
	}
	if trimmed.Status.Conditions != nil || trimmed.Status.Constraints != nil ||
		trimmed.Status.Credentials != nil || trimmed.Status.LastMaintenance != nil {
		t.Errorf("not trimmed: managedFields %v, status %+v", trimmed.ManagedFields, trimmed.Status)
	}
	if trimmed.Size() >= full.Size() {
		t.Errorf("trimmed shoot has %d bytes, the full one %d", trimmed.Size(), full.Size())
	}
}

// TestCacheTransformOtherObjects: other objects of the garden cache (the operator's ConfigMaps) lose their
// managedFields, and a ConfigMap its data for a digest per key; an object without managedFields keeps none (nil
// stays nil: an empty list written back would reset the server's).
func TestCacheTransformOtherObjects(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "auth", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kim"}}},
		Data: map[string]string{"config.yaml": "jwt: []"}}
	out, err := CacheTransform(cm)
	if got := out.(*corev1.ConfigMap); err != nil || got.ManagedFields != nil || got.Data != nil ||
		!configMapHolds(got, "config.yaml", "jwt: []") || configMapHolds(got, "config.yaml", "jwt: [x]") {
		t.Errorf("ConfigMap %+v, %v; want managedFields and data gone, the digest of config.yaml kept", out, err)
	}
	bare := &corev1.ConfigMap{}
	if out, err := CacheTransform(bare); err != nil || out.(*corev1.ConfigMap).ManagedFields != nil {
		t.Errorf("%+v, %v", out, err)
	}
}
