package catalogue

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
)

func TestClassification(t *testing.T) {
	all := []string{"1.32.9", "1.33.4", "1.33.5", "1.34.2"}
	for _, tc := range []struct {
		reason, version string
		want            gardencorev1beta1.VersionClassification
	}{
		{"the only patch of a minor is supported", "1.32.9", gardencorev1beta1.ClassificationSupported},
		{"an older patch is deprecated: Gardener allows one supported version per minor", "1.33.4", gardencorev1beta1.ClassificationDeprecated},
		{"the newest patch of a minor is supported", "1.33.5", gardencorev1beta1.ClassificationSupported},
	} {
		if got := classification(tc.version, all); got != tc.want {
			t.Errorf("%s: classification(%s) = %s, want %s", tc.reason, tc.version, got, tc.want)
		}
	}
}

func TestObjects(t *testing.T) {
	c := Default()
	objs, err := c.Objects()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	firstSeed, lastRegistration := -1, -1
	for i, o := range objs {
		switch o.(type) {
		case *gardencorev1beta1.CloudProfile:
			counts["CloudProfile"]++
		case *gardencorev1beta1.Seed:
			counts["Seed"]++
			if firstSeed < 0 {
				firstSeed = i
			}
			if o.GetLabels()["seed.gardener.cloud/region"] == "" {
				t.Errorf("seed %s has no region label", o.GetName())
			}
		case *gardencorev1beta1.ControllerRegistration:
			lastRegistration = i
		}
	}
	want := map[string]int{"CloudProfile": 6, "Seed": 20}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("object counts (-want +got):\n%s", diff)
	}
	if lastRegistration > firstSeed {
		t.Errorf("registrations must precede seeds: the admission rejects seeds of unregistered types")
	}
	c.Providers[0].MachineTypes = append(c.Providers[0].MachineTypes, MachineType{Name: "broken", CPU: "two", Memory: "1Gi"})
	if _, err := c.Objects(); err == nil {
		t.Error("an unparsable machine type size must be reported")
	}
	if _, err := (Catalogue{}).Objects(); err == nil {
		t.Error("a catalogue without project must be reported")
	}
}
