package gardener

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// runningShoot is fullShoot in the middle of a Reconcile operation (Processing, 40 %).
func runningShoot(t *testing.T) *gardencorev1beta1.Shoot {
	s := fullShoot(t)
	s.ResourceVersion = "100"
	s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateProcessing
	s.Status.LastErrors = nil
	return s
}

// notApplied is runningShoot without the operator's apply: the cache trims its spec.
func notApplied(t *testing.T) *gardencorev1beta1.Shoot {
	s := runningShoot(t)
	s.ManagedFields = s.ManagedFields[:1]
	return s
}

// cachedUpdate passes both versions through CacheTransform, as the garden cache does, the new one at the next
// resourceVersion.
func cachedUpdate(t *testing.T, base *gardencorev1beta1.Shoot, change func(*gardencorev1beta1.Shoot)) (old, new *gardencorev1beta1.Shoot) {
	t.Helper()
	n := base.DeepCopy()
	n.ResourceVersion = "101"
	change(n)
	o, err := CacheTransform(base.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	c, err := CacheTransform(n)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*gardencorev1beta1.Shoot), c.(*gardencorev1beta1.Shoot)
}

// TestShootUpdatesTellWhatChanged: every change of a field a controller reads is a change; Gardener's status writes
// of what the cache trims (conditions, constraints, maintenance, credentials, its managedFields) are none; the
// progress of a running operation alone is progress. A missed change would leave a Runtime waiting for its drift
// period, so each read field has its case.
func TestShootUpdatesTellWhatChanged(t *testing.T) {
	later := metav1.NewTime(time.Date(2026, 6, 1, 12, 5, 0, 0, time.UTC))
	op := func(change func(*gardencorev1beta1.LastOperation)) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) { change(s.Status.LastOperation) }
	}
	type want struct{ changed, progressOnly bool }
	news, progress, none := want{true, false}, want{true, true}, want{false, false}
	cases := []struct {
		reason string
		base   func(*testing.T) *gardencorev1beta1.Shoot
		change func(*gardencorev1beta1.Shoot)
		want   want
	}{
		// The last operation: what the lifecycle decides on.
		{"the operation succeeds", runningShoot, op(func(o *gardencorev1beta1.LastOperation) {
			o.State, o.Progress, o.LastUpdateTime = gardencorev1beta1.LastOperationStateSucceeded, 100, later
		}), news},
		{"the operation fails", runningShoot, op(func(o *gardencorev1beta1.LastOperation) { o.State = gardencorev1beta1.LastOperationStateFailed }), news},
		{"the operation goes to Error", runningShoot, op(func(o *gardencorev1beta1.LastOperation) { o.State = gardencorev1beta1.LastOperationStateError }), news},
		{"another operation starts", runningShoot, op(func(o *gardencorev1beta1.LastOperation) {
			o.Type, o.Progress = gardencorev1beta1.LastOperationTypeDelete, 0
		}), news},
		{"the first operation is reported", func(t *testing.T) *gardencorev1beta1.Shoot {
			s := runningShoot(t)
			s.Status.LastOperation = nil
			return s
		}, func(s *gardencorev1beta1.Shoot) {
			s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate, State: gardencorev1beta1.LastOperationStateProcessing}
		}, news},
		{"a finished operation's time changes (the reconcile time)", func(t *testing.T) *gardencorev1beta1.Shoot {
			s := runningShoot(t)
			s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateSucceeded
			return s
		}, op(func(o *gardencorev1beta1.LastOperation) { o.LastUpdateTime = later }), news},
		{"a failed operation's time changes (the retry backoff)", func(t *testing.T) *gardencorev1beta1.Shoot {
			s := runningShoot(t)
			s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateFailed
			return s
		}, op(func(o *gardencorev1beta1.LastOperation) { o.LastUpdateTime = later }), news},
		{"errors come with progress", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.Status.LastOperation.Progress = 50
			s.Status.LastErrors = []gardencorev1beta1.LastError{{Description: "quota", Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}}}
		}, news},
		// The rest of the status the cache keeps.
		{"Gardener picks up a generation", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Status.ObservedGeneration++ }, news},
		{"the cluster hibernated", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Status.IsHibernated = !s.Status.IsHibernated }, news},
		{"the API server is advertised", func(t *testing.T) *gardencorev1beta1.Shoot {
			s := runningShoot(t)
			s.Status.AdvertisedAddresses = nil
			return s
		}, func(s *gardencorev1beta1.Shoot) {
			s.Status.AdvertisedAddresses = []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api.c-1.example"}}
		}, news},
		{"the status names another seed", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Status.SeedName = ptr.To("aws-eu2") }, news},
		// Metadata and spec.
		{"a new generation of the spec", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.Generation++
			s.Spec.Kubernetes.Version = "1.33.1"
		}, news},
		{"the spec of a shoot that confines spec rollouts changes without a new generation", func(t *testing.T) *gardencorev1beta1.Shoot {
			s := runningShoot(t)
			s.Spec.Maintenance = &gardencorev1beta1.Maintenance{ConfineSpecUpdateRollout: ptr.To(true)}
			return s
		}, func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.33.1" }, news},
		{"the registry cache of a shoot the operator never applied, without a new generation", notApplied, func(s *gardencorev1beta1.Shoot) {
			s.Spec.Extensions = append(s.Spec.Extensions, gardencorev1beta1.Extension{Type: shoot.ExtensionRegistryCache})
		}, news},
		{"hibernation requested", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.Generation++
			s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(true)}
		}, news},
		{"bound to a seed", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.Generation++ // the binding subresource raises it too
			s.Spec.SeedName = ptr.To("aws-eu2")
		}, news},
		{"a deletion mark", runningShoot, func(s *gardencorev1beta1.Shoot) {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationDeletionRuntimeID, "rt-1")
		}, news},
		{"the runtime ID annotation", runningShoot, func(s *gardencorev1beta1.Shoot) {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, shoot.AnnotationRuntimeID, "rt-2")
		}, news},
		{"a label", runningShoot, func(s *gardencorev1beta1.Shoot) {
			metav1.SetMetaDataLabel(&s.ObjectMeta, "operator.kyma-project.io/managed-by", "x")
		}, news},
		{"deletion starts", runningShoot, func(s *gardencorev1beta1.Shoot) { s.DeletionTimestamp = &later }, news},
		{"a finalizer", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Finalizers = append(s.Finalizers, "gardener") }, news},
		{"the operator applies the shoot (its managedFields entry)", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.ManagedFields[1].Time = &later
		}, news},
		{"a resync (the same version)", runningShoot, func(s *gardencorev1beta1.Shoot) { s.ResourceVersion = "100" }, news},
		// Progress of a running operation.
		{"progress, description and time of a running operation", runningShoot, op(func(o *gardencorev1beta1.LastOperation) {
			o.Progress, o.Description, o.LastUpdateTime = 70, "Waiting for the worker pools", later
		}), progress},
		{"only the time of a running operation", runningShoot, op(func(o *gardencorev1beta1.LastOperation) { o.LastUpdateTime = later }), progress},
		// Gardener's writes of what nothing reads.
		{"conditions (the care controller's heartbeat)", runningShoot, func(s *gardencorev1beta1.Shoot) {
			s.Status.Conditions[0].LastUpdateTime, s.Status.Conditions[0].Message = later, "API server answered in 12 ms"
		}, none},
		{"constraints", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Status.Constraints = nil }, none},
		{"the last maintenance", runningShoot, func(s *gardencorev1beta1.Shoot) { s.Status.LastMaintenance.Description = "kubernetes patch" }, none},
		{"the gardenlet's managedFields", runningShoot, func(s *gardencorev1beta1.Shoot) { s.ManagedFields[0].Time = &later }, none},
		{"a shoot the operator never applied, only its version", notApplied, func(s *gardencorev1beta1.Shoot) { s.Status.Conditions = nil }, none},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			old, new := cachedUpdate(t, c.base(t), c.change)
			changed, progressOnly := ShootUpdates{}.Changed(old, new)
			if got := (want{changed, progressOnly}); got != c.want {
				t.Errorf("changed, progressOnly = %v, %v; want %v, %v", changed, progressOnly, c.want.changed, c.want.progressOnly)
			}
		})
	}
}

// BenchmarkShootUpdates: the cost of classifying one update event of an applied shoot (the whole spec compared).
func BenchmarkShootUpdates(b *testing.B) {
	t := &testing.T{}
	old, new := cachedUpdate(t, runningShoot(t), func(s *gardencorev1beta1.Shoot) { s.Status.Conditions = nil })
	b.ReportAllocs()
	for b.Loop() {
		ShootUpdates{}.Changed(old, new)
	}
}
