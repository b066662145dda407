package fake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/ports"
)

func TestDeletionGuardContract(t *testing.T) {
	contract.RunDeletionGuardContract(t, func(t *testing.T) contract.GuardFixture {
		g := &fake.DeletionGuard{}
		return contract.GuardFixture{Guard: g, SetFrozen: func(_ *testing.T, frozen bool) { g.SetFrozen(frozen) }}
	})
}

func TestDeletionRecordsContract(t *testing.T) {
	contract.RunDeletionRecordsContract(t, func(t *testing.T) contract.RecordsFixture {
		r := fake.NewDeletionRecords()
		r.Namespaces = []string{"kcp-system"}
		return contract.RecordsFixture{Records: r, Namespace: "kcp-system", Unwatched: "default"}
	})
}

func TestServerClockContract(t *testing.T) {
	contract.RunServerClockContract(t, func(t *testing.T) contract.ServerClockFixture {
		clock := fake.NewClock(time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC))
		return contract.ServerClockFixture{Clock: &fake.ServerClock{Clock: clock}, Now: clock.Now, Tolerance: 0,
			Unreachable: &fake.ServerClock{Clock: clock, Err: errors.Join(ports.ErrTransient, errors.New("connection refused"))}}
	})
}

func TestSeedsContract(t *testing.T) {
	contract.RunSeedsContract(t, func(t *testing.T) contract.SeedsFixture {
		g := fake.NewGarden(fake.NewClock(time.Now()))
		g.AddSeed("aws", "eu-central-1")
		g.Schedule("", "aws-eu1", "eu-central-1")
		return contract.SeedsFixture{Seeds: g, Available: [2]string{"aws", "eu-central-1"}, None: [2]string{"aws", "ap-south-1"},
			Seed: "aws-eu1", SeedRegion: "eu-central-1",
			AddHidden: func(_ *testing.T, provider, region string) { g.AddHiddenSeed(provider, region) }}
	})
}

func TestRuntimeRegistryContract(t *testing.T) {
	contract.RunRuntimeRegistryContract(t, func(t *testing.T) contract.RegistryFixture {
		r := fake.NewRuntimes()
		return contract.RegistryFixture{Registry: r, Namespace: "kcp-system",
			Put: func(_ *testing.T, id, shoot string) {
				r.Put(fake.RestoreDocument{Name: id, Namespace: "kcp-system", Shoot: shoot})
			},
			Exists: func(_ *testing.T, id string) (bool, bool) {
				rt, ok := r.Get(id)
				return ok, rt.Restored
			},
			Document: func(id, namespace, shoot string) []byte {
				return fake.RestoreDocument{Name: id, Namespace: namespace, Shoot: shoot}.Encode()
			},
		}
	})
}

func TestKubeconfigRequestsContract(t *testing.T) {
	contract.RunKubeconfigRequestsContract(t, func(t *testing.T) contract.RequestsFixture {
		g := fake.NewGardenerClusters()
		return contract.RequestsFixture{Requests: g, Namespace: "kcp-system",
			Put:    func(_ *testing.T, req ports.KubeconfigRequest) { g.Put(req) },
			Delete: func(_ *testing.T, name string) { g.Delete("kcp-system", name) }}
	})
}

func TestCloudProfilesContract(t *testing.T) {
	contract.RunCloudProfilesContract(t, func(t *testing.T) contract.CloudProfilesFixture {
		g := fake.NewGarden(fake.NewClock(time.Now()))
		return contract.CloudProfilesFixture{Profiles: g, AddProfile: func(_ *testing.T, name string, regions map[string][]string) {
			for region, zones := range regions {
				g.SetRegionZones(name, region, zones...)
			}
		}}
	})
}
