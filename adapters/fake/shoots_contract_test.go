package fake_test

import (
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

func TestGardenShootsContract(t *testing.T) {
	contract.RunShootsContract(t, func(t *testing.T) contract.ShootsFixture {
		g := fake.NewGarden(fake.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		return contract.ShootsFixture{
			Shoots: g, Lister: g,
			Spec: func(name string) shoot.Spec {
				return shoot.Spec{Name: name, Workers: []shoot.WorkerSpec{{Worker: shoot.Worker{Name: "cpu-worker-0", Minimum: 1, Maximum: 3}}}}
			},
			PutForeign: func(_ *testing.T, name string) { g.PutForeign(name) },
			WorkerNames: func(_ *testing.T, name string) []string {
				s, _ := g.Spec(name)
				var names []string
				for _, w := range s.Workers {
					names = append(names, w.Name)
				}
				return names
			},
			PutPredecessor: func(_ *testing.T, name, runtimeID string) {
				g.PutPredecessor(shoot.Spec{Name: name}, runtimeID)
			},
			// The fake keeps the domain's marks, not annotations: the provisioner's annotation is the adapter's concern.
			PutProvisioned: func(_ *testing.T, name, runtimeID string) {
				g.PutPredecessor(shoot.Spec{Name: name}, runtimeID)
			},
			Drift: func(_ *testing.T, name string) {
				g.Drift(name, func(s *shoot.Spec) { s.Workers[0].Maximum++ })
			},
			Fail: func(_ *testing.T, name string) {
				g.Fail(name, "simulated: quota exceeded", shootstate.ErrInfraQuotaExceeded)
			},
		}
	})
}
