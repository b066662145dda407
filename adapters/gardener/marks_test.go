package gardener

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/adapters/gardener/translate"
)

// TestObserveReadsTheProvisionersRuntimeID: the lifecycle adopts a provisioner's shoot for its runtime because the
// observation names that runtime, while the shoot stays unmanaged until adopted.
func TestMigrationObserveReadsTheProvisionersRuntimeID(t *testing.T) {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Annotations: map[string]string{translate.AnnotationProvisionerRuntimeID: "rt-1"}}}
	got := Observe(s)
	if got.Marks.RuntimeID != "rt-1" || got.Marks.Managed || got.OwnedBy("rt-1") {
		t.Errorf("Observe = %+v; want runtime rt-1, not managed, not owned", got.Marks)
	}
}
