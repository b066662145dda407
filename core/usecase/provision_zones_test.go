package usecase_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// zonesWorld is a provisioner on the fakes whose cloud profile "aws" (modelConfig) offers zones, and a Runtime whose
// pool comes without zones, as KEB sends it when its providers configuration lists none for the region.
type zonesWorld struct {
	t      *testing.T
	clock  *fake.Clock
	p      *usecase.Provisioner
	garden *fake.Garden
	req    usecase.RuntimeRequest
}

func newZonesWorld(t *testing.T, maxSurge string, profileZones ...string) *zonesWorld {
	clock := fake.NewClock(reapStart)
	p, garden := newTestProvisioner(clock)
	p.Profiles = garden
	garden.SetRegionZones("aws", "eu-west-1", profileZones...)
	rt := (&kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}).spec()
	rt.Workers[0].Zones, rt.Workers[0].MaxSurge = nil, maxSurge
	return &zonesWorld{t: t, clock: clock, p: p, garden: garden,
		req: usecase.RuntimeRequest{Runtime: rt, Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}}
}

func (w *zonesWorld) pass() usecase.ProvisionResult {
	w.t.Helper()
	res, err := w.p.Provision(context.Background(), w.req, w.clock.Now())
	if err != nil {
		w.t.Fatal(err)
	}
	w.req.Configured = res.Configured
	return res
}

// shootZones are the zones of the shoot's pool cpu-worker-0.
func (w *zonesWorld) shootZones() []string {
	w.t.Helper()
	spec, ok := w.garden.Spec("c-1")
	if !ok || len(spec.Workers) == 0 {
		w.t.Fatalf("no shoot c-1 with a pool")
	}
	return spec.Workers[0].Zones
}

func (w *zonesWorld) applies() int { return w.garden.Calls()["Apply"] }

// TestAZonelessPoolOfANewShootGetsTheProfilesFirstZones: n = maxSurge zones, in the profile's order, and a re-run
// computes the same (the shoot is not written again).
func TestAZonelessPoolOfANewShootGetsTheProfilesFirstZones(t *testing.T) {
	w := newZonesWorld(t, "2", "eu-west-1b", "eu-west-1c", "eu-west-1a")
	w.pass()
	if got, want := w.shootZones(), []string{"eu-west-1b", "eu-west-1c"}; !slices.Equal(got, want) {
		t.Fatalf("zones of the new pool %v, want the profile's first two %v", got, want)
	}
	w.garden.Succeed("c-1")
	applied := w.applies()
	if d := w.pass().Decision; d.State == lifecycle.StateFailed {
		t.Fatalf("re-run: %s %s: %s", d.State, d.Reason, d.Message)
	}
	if w.applies() != applied {
		t.Errorf("a re-run wrote the shoot again (%d applies, was %d): the zones it computed differ", w.applies(), applied)
	}
}

// TestAZonelessPoolKeepsItsZonesWhenTheProfileChanges: on an update (a new generation) and on every re-run the
// pool keeps the zones its shoot has, whatever the profile lists now; a changed profile alone writes nothing.
func TestAZonelessPoolKeepsItsZonesWhenTheProfileChanges(t *testing.T) {
	w := newZonesWorld(t, "1", "eu-west-1a", "eu-west-1b")
	w.pass()
	w.garden.Succeed("c-1")
	w.pass()
	before := slices.Clone(w.shootZones())
	applied := w.applies()

	w.garden.SetRegionZones("aws", "eu-west-1", "eu-west-1c", "eu-west-1b")
	if d := w.pass().Decision; d.State == lifecycle.StateFailed {
		t.Fatalf("after the profile changed: %s %s: %s", d.State, d.Reason, d.Message)
	}
	if w.applies() != applied {
		t.Errorf("a changed cloud profile alone wrote the shoot (%d applies, was %d)", w.applies(), applied)
	}

	w.req.Runtime.Generation, w.req.Runtime.Workers[0].Maximum = 2, 7 // KEB's update: the machine count
	w.pass()
	if w.applies() == applied {
		t.Fatal("the update was not applied")
	}
	if got := w.shootZones(); !slices.Equal(got, before) {
		t.Errorf("zones after the update %v, want the pool's current %v (Gardener forbids removing zones; the profile changed)", got, before)
	}
}

// TestAZonelessPoolGetsAtMostTheProfilesZones: a maxSurge above the region's zone count takes every zone once.
func TestAZonelessPoolGetsAtMostTheProfilesZones(t *testing.T) {
	w := newZonesWorld(t, "3", "eu-west-1a", "eu-west-1b")
	w.pass()
	if got, want := w.shootZones(), []string{"eu-west-1a", "eu-west-1b"}; !slices.Equal(got, want) {
		t.Fatalf("zones %v, want every zone of the region %v", got, want)
	}
}

// TestAZonelessPoolWithoutZonesInTheProfileIsRefused: nothing is written; the Runtime says why and what to do.
func TestAZonelessPoolWithoutZonesInTheProfileIsRefused(t *testing.T) {
	w := newZonesWorld(t, "1")
	res := w.pass()
	if res.Decision.State != lifecycle.StateFailed || res.Decision.Reason != lifecycle.ReasonSpecInvalid {
		t.Fatalf("decision %s %s, want Failed %s", res.Decision.State, res.Decision.Reason, lifecycle.ReasonSpecInvalid)
	}
	if p := res.Input.Intent.Invalid; p == nil || p.Reason != string(shoot.ReasonNoZonesInCloudProfile) {
		t.Fatalf("problem %+v, want reason %s", p, shoot.ReasonNoZonesInCloudProfile)
	}
	if n := w.applies(); n != 0 {
		t.Errorf("%d applies, want none", n)
	}
}

// TestAnUnreadableProfileIsNoVerdict: a failed read of the cloud profile is an error of the pass (retried), not a
// verdict on the Runtime, and nothing is written.
func TestAnUnreadableProfileIsNoVerdict(t *testing.T) {
	w := newZonesWorld(t, "1", "eu-west-1a")
	w.garden.Err = func(method string) error {
		if method == "RegionZones" {
			return errors.Join(ports.ErrTransient, errors.New("connection refused"))
		}
		return nil
	}
	if _, err := w.p.Provision(context.Background(), w.req, w.clock.Now()); !errors.Is(err, ports.ErrTransient) {
		t.Fatalf("error %v, want a transient error", err)
	}
	if n := w.applies(); n != 0 {
		t.Errorf("%d applies, want none", n)
	}
}
