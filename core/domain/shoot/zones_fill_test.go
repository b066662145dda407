package shoot

import (
	"slices"
	"strings"
	"testing"
)

// zoneless is testRuntime(AWS) whose pools come without zones, as KEB sends them when its providers configuration
// lists no zones for the region; maxSurge is what KEB sets (the number of zones it meant to use).
func zoneless(maxSurge string) Runtime {
	rt := testRuntime(AWS)
	for i := range rt.Workers {
		rt.Workers[i].Zones, rt.Workers[i].MaxSurge = nil, maxSurge
	}
	return rt
}

func TestFillZonesOfANewPoolTakesTheFirstZonesOfTheProfile(t *testing.T) {
	profile := []string{"eu-west-1c", "eu-west-1a", "eu-west-1b"}
	for _, tc := range []struct {
		maxSurge string
		want     []string
	}{
		{"1", []string{"eu-west-1c"}},
		{"3", []string{"eu-west-1c", "eu-west-1a", "eu-west-1b"}},
		{"5", []string{"eu-west-1c", "eu-west-1a", "eu-west-1b"}}, // capped to the zones there are
		{"0", []string{"eu-west-1c"}},                             // at least one
		{"", []string{"eu-west-1c"}},                              // Gardener's default maxSurge is 1
		{"50%", []string{"eu-west-1c"}},                           // a percentage says nothing about zones
	} {
		rt, err := FillZones(zoneless(tc.maxSurge), nil, "aws-kyma", slices.Clone(profile))
		if err != nil {
			t.Fatalf("maxSurge %q: %v", tc.maxSurge, err)
		}
		if got := rt.Workers[0].Zones; !slices.Equal(got, tc.want) {
			t.Errorf("maxSurge %q: zones %v, want %v", tc.maxSurge, got, tc.want)
		}
	}
}

func TestFillZonesKeepsTheZonesOfTheCurrentPool(t *testing.T) {
	cur := &Current{Workers: []CurrentWorker{{Name: "cpu-worker-0", Zones: []string{"eu-west-1b", "eu-west-1a"}}}}
	// The profile changed since the pool was created: the pool's zones must not move.
	rt, err := FillZones(zoneless("3"), cur, "aws-kyma", []string{"eu-west-1c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Workers[0].Zones; !slices.Equal(got, []string{"eu-west-1b", "eu-west-1a"}) {
		t.Errorf("zones %v, want the current pool's [eu-west-1b eu-west-1a]", got)
	}
	if NeedsProfileZones(zoneless("3"), cur) {
		t.Error("the profile is read although every zone-less pool keeps its current zones")
	}
	if !NeedsProfileZones(zoneless("3"), nil) {
		t.Error("the profile is not read for a new pool without zones")
	}
}

func TestFillZonesLeavesPoolsWithZonesAndTheCallersRuntimeAlone(t *testing.T) {
	in := testRuntime(AWS)
	want := slices.Clone(in.Workers[0].Zones)
	rt, err := FillZones(in, nil, "aws-kyma", []string{"eu-west-1c"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rt.Workers[0].Zones, want) {
		t.Errorf("a pool with zones changed: %v, want %v", rt.Workers[0].Zones, want)
	}
	z := zoneless("1")
	if _, err := FillZones(z, nil, "aws-kyma", []string{"eu-west-1c"}); err != nil {
		t.Fatal(err)
	}
	if len(z.Workers[0].Zones) != 0 {
		t.Errorf("the caller's Runtime was changed: %v", z.Workers[0].Zones)
	}
}

func TestFillZonesWithoutZonesInTheProfileIsAValidationError(t *testing.T) {
	_, err := FillZones(zoneless("1"), nil, "aws-kyma", nil)
	ve := AsValidationError(err)
	if ve == nil || ve.Reason != ReasonNoZonesInCloudProfile || ve.Field != "spec.shoot.provider.workers[0].zones" {
		t.Fatalf("got %v; want a %s validation error on the pool's zones", err, ReasonNoZonesInCloudProfile)
	}
	for _, part := range []string{`"aws-kyma"`, `"eu-west-1"`, "providers configuration"} {
		if !strings.Contains(ve.Message, part) {
			t.Errorf("message %q does not name %s", ve.Message, part)
		}
	}
}

// TestGenerateWithFilledZones: the filled pool passes generation's zone checks and is the shoot's pool.
func TestGenerateWithFilledZones(t *testing.T) {
	rt, err := FillZones(zoneless("2"), nil, "aws-kyma", []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Generate(rt, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Workers[0].Zones; !slices.Equal(got, []string{"eu-west-1a", "eu-west-1b"}) {
		t.Errorf("shoot pool zones %v, want [eu-west-1a eu-west-1b]", got)
	}
}
