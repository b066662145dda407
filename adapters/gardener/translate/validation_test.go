package translate

import (
	"testing"

	"github.com/gardener/gardener/pkg/api/core/validation"
	"github.com/gardener/gardener/pkg/apis/core"
	"github.com/gardener/gardener/pkg/apis/core/install"
	apiserverfeatures "github.com/gardener/gardener/pkg/apiserver/features"
	"github.com/gardener/gardener/pkg/features"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestGoldenShootsPassGardenerValidation runs Gardener's own defaulting and static validation (the
// code the gardener-apiserver runs before admission) over every golden Shoot. Admission checks that
// need other objects (cloud profile, credentials binding, referenced ConfigMaps and Secrets) are
// left to the integration test against the real gardener-apiserver.
func TestGoldenShootsPassGardenerValidation(t *testing.T) {
	// The gardener-apiserver's feature gates, at their defaults. The in-process gardener-apiserver of the
	// integration test registers them in the same global gate (a second Add panics), so only when missing.
	if _, known := features.DefaultFeatureGate.GetAll()[features.InPlaceNodeUpdates]; !known {
		apiserverfeatures.RegisterFeatureGates()
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	shoots, err := LoadShoots("../testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range shoots {
		t.Run(name, func(t *testing.T) {
			scheme.Default(s)
			var internal core.Shoot
			if err := scheme.Convert(s, &internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateShoot(&internal); len(errs) > 0 {
				t.Errorf("gardener rejects the shoot:\n%v", errs.ToAggregate())
			}
		})
	}
}
