package catalogue

import (
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/test/testenv/keb"
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
	want := map[string]int{"CloudProfile": 6, "Seed": 50}
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

// TestDefaultCarriesKEBPlans: every machine type (default and after a customer's change), region, zone and volume
// type KEB sends for its plans (keb.Plans, read from KEB at KEBSource) is in the default catalogue, else the
// garden refuses the shoot where production accepts it (issue 45).
func TestDefaultCarriesKEBPlans(t *testing.T) {
	c := Default()
	for _, plan := range keb.Plans {
		p, ok := c.Provider(plan.ProviderType)
		if !ok {
			t.Errorf("%s: no cloud profile of provider %s", plan, plan.ProviderType)
			continue
		}
		for _, mt := range []string{plan.MachineType, plan.UpdatedMachineType} {
			if mt != "" && !slices.ContainsFunc(p.MachineTypes, func(m MachineType) bool { return m.Name == mt }) {
				t.Errorf("%s: machine type %s missing from cloud profile %s", plan, mt, p.CloudProfile)
			}
		}
		if plan.VolumeType != "" && !slices.Contains(p.VolumeTypes, plan.VolumeType) {
			t.Errorf("%s: volume type %s missing from cloud profile %s", plan, plan.VolumeType, p.CloudProfile)
		}
		i := slices.IndexFunc(p.Regions, func(r Region) bool { return r.Name == plan.Region })
		if i < 0 {
			t.Errorf("%s: region %s missing from cloud profile %s", plan, plan.Region, p.CloudProfile)
			continue
		}
		for _, z := range plan.Zones {
			if !slices.Contains(p.Regions[i].Zones, z) {
				t.Errorf("%s: zone %s missing from region %s", plan, z, plan.Region)
			}
		}
	}
	// KEB's whole providers configuration, not only the plans' defaults: a customer picks any of its regions.
	for typ, regions := range kebRegions() {
		p, _ := c.Provider(typ)
		for _, r := range regions {
			if !slices.ContainsFunc(p.Regions, func(o Region) bool { return o.Name == r.Name }) {
				t.Errorf("KEB region %s of %s missing", r.Name, typ)
			}
		}
	}
}
