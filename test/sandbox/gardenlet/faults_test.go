package gardenlet

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFaultFor(t *testing.T) {
	create, reconcile := gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationTypeReconcile
	for _, tc := range []struct {
		reason      string
		opts        Options
		annotations map[string]string
		op          gardencorev1beta1.LastOperationType
		want        []gardencorev1beta1.ErrorCode
	}{
		{reason: "no fault configured", op: create},
		{reason: "annotation with several codes", op: create,
			annotations: map[string]string{AnnotationFailWith: "ERR_INFRA_QUOTA_EXCEEDED, ERR_INFRA_UNAUTHORIZED"},
			want:        []gardencorev1beta1.ErrorCode{"ERR_INFRA_QUOTA_EXCEEDED", "ERR_INFRA_UNAUTHORIZED"}},
		{reason: "annotation restricted to another operation", op: create,
			annotations: map[string]string{AnnotationFailWith: "ERR_INFRA_QUOTA_EXCEEDED", AnnotationFailOperation: "Reconcile"}},
		{reason: "operation restriction is case-insensitive", op: reconcile,
			annotations: map[string]string{AnnotationFailWith: "ERR_INFRA_QUOTA_EXCEEDED", AnnotationFailOperation: "reconcile"},
			want:        []gardencorev1beta1.ErrorCode{"ERR_INFRA_QUOTA_EXCEEDED"}},
		{reason: "global fault", op: create, opts: Options{FailWith: "ERR_CONFIGURATION_PROBLEM"},
			want: []gardencorev1beta1.ErrorCode{"ERR_CONFIGURATION_PROBLEM"}},
		{reason: "global fault for another operation", op: create, opts: Options{FailWith: "ERR_CONFIGURATION_PROBLEM", FailOperation: reconcile}},
		{reason: "a failing deletion fails", op: gardencorev1beta1.LastOperationTypeDelete,
			annotations: map[string]string{AnnotationFailWith: "ERR_CLEANUP_CLUSTER_RESOURCES"},
			want:        []gardencorev1beta1.ErrorCode{"ERR_CLEANUP_CLUSTER_RESOURCES"}},
		{reason: "a force-deletion skips the failing cleanup", op: gardencorev1beta1.LastOperationTypeDelete,
			annotations: map[string]string{AnnotationFailWith: "ERR_CLEANUP_CLUSTER_RESOURCES", "confirmation.gardener.cloud/force-deletion": "true"}},
		{reason: "force-deletion does not affect other operations", op: reconcile, opts: Options{FailWith: "ERR_CONFIGURATION_PROBLEM"},
			annotations: map[string]string{"confirmation.gardener.cloud/force-deletion": "true"},
			want:        []gardencorev1beta1.ErrorCode{"ERR_CONFIGURATION_PROBLEM"}},
	} {
		g := &Gardenlet{opts: tc.opts.withDefaults()}
		shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		if diff := cmp.Diff(tc.want, g.faultFor(shoot, tc.op).codes); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
		}
	}
}

// TestFailMatching: a rule fails the operation it names of the shoots it selects, before the global options, and
// nothing once removed.
func TestFailMatching(t *testing.T) {
	create := gardencorev1beta1.LastOperationTypeCreate
	g := &Gardenlet{opts: Options{FailWith: "ERR_CONFIGURATION_PROBLEM", FailOperation: gardencorev1beta1.LastOperationTypeReconcile}.withDefaults()}
	victim := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "p-1"}}
	other := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1"}}
	remove := g.FailMatching(func(s *gardencorev1beta1.Shoot) bool { return s.Name == "p-1" }, create, "ERR_INFRA_UNAUTHORIZED")
	want := []gardencorev1beta1.ErrorCode{"ERR_INFRA_UNAUTHORIZED"}
	if diff := cmp.Diff(want, g.faultFor(victim, create).codes); diff != "" {
		t.Errorf("the selected shoot's creation (-want +got):\n%s", diff)
	}
	if f := g.faultFor(other, create); !f.none() {
		t.Errorf("another shoot's creation fails: %v", f.codes)
	}
	if diff := cmp.Diff([]gardencorev1beta1.ErrorCode{"ERR_CONFIGURATION_PROBLEM"}, g.faultFor(victim, gardencorev1beta1.LastOperationTypeReconcile).codes); diff != "" {
		t.Errorf("the selected shoot's reconcile takes the global fault (-want +got):\n%s", diff)
	}
	remove()
	if f := g.faultFor(victim, create); !f.none() {
		t.Errorf("the removed rule still fails the creation: %v", f.codes)
	}
}

func TestDuration(t *testing.T) {
	g := &Gardenlet{opts: Options{CreateDuration: 3 * time.Second}.withDefaults()}
	for _, tc := range []struct {
		reason      string
		annotations map[string]string
		op          gardencorev1beta1.LastOperationType
		want        time.Duration
	}{
		{"option per operation type", nil, gardencorev1beta1.LastOperationTypeCreate, 3 * time.Second},
		{"default for the others", nil, gardencorev1beta1.LastOperationTypeDelete, Defaults().DeleteDuration},
		{"annotation wins", map[string]string{AnnotationDuration: "0s"}, gardencorev1beta1.LastOperationTypeCreate, 0},
		{"unparsable annotation is ignored", map[string]string{AnnotationDuration: "soon"}, gardencorev1beta1.LastOperationTypeCreate, 3 * time.Second},
	} {
		shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		if got := g.duration(shoot, tc.op); got != tc.want {
			t.Errorf("%s: duration = %v, want %v", tc.reason, got, tc.want)
		}
	}
}
