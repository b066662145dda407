package gardener

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/shoot"
)

func TestMigrationRuntimeIDOfPredecessors(t *testing.T) {
	for _, tc := range []struct {
		reason      string
		annotations map[string]string
		wantID      string
		wantBy      Predecessor
	}{
		{"no annotation names no runtime", nil, "", PredecessorNone},
		{"the infrastructure manager's annotation", map[string]string{shoot.AnnotationRuntimeID: "a"}, "a", PredecessorInfrastructureManager},
		{"the provisioner's annotation", map[string]string{AnnotationProvisionerRuntimeID: "b"}, "b", PredecessorProvisioner},
		{"the infrastructure manager's wins over the provisioner's it took over",
			map[string]string{shoot.AnnotationRuntimeID: "a", AnnotationProvisionerRuntimeID: "b"}, "a", PredecessorInfrastructureManager},
		{"an empty annotation names nothing", map[string]string{shoot.AnnotationRuntimeID: "", AnnotationProvisionerRuntimeID: "b"}, "b", PredecessorProvisioner},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			id, by := RuntimeIDOf(tc.annotations)
			if id != tc.wantID || by != tc.wantBy {
				t.Errorf("RuntimeIDOf = %q, %q; want %q, %q", id, by, tc.wantID, tc.wantBy)
			}
		})
	}
}

// TestObserveReadsTheProvisionersRuntimeID: the lifecycle adopts a provisioner's shoot for its runtime because the
// observation names that runtime, while the shoot stays unmanaged until adopted.
func TestMigrationObserveReadsTheProvisionersRuntimeID(t *testing.T) {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Annotations: map[string]string{AnnotationProvisionerRuntimeID: "rt-1"}}}
	got := Observe(s)
	if got.Marks.RuntimeID != "rt-1" || got.Marks.Managed || got.OwnedBy("rt-1") {
		t.Errorf("Observe = %+v; want runtime rt-1, not managed, not owned", got.Marks)
	}
}
