package translate

import (
	"testing"

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
