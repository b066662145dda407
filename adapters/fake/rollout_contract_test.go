package fake_test

import (
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/ports"
)

func TestRuntimeBootstrapListerContract(t *testing.T) {
	contract.RunRuntimeBootstrapListerContract(t, func(*testing.T) contract.RolloutFixture {
		r := fake.NewRuntimeBootstrapRecords()
		return contract.RolloutFixture{Lister: r,
			Put:    func(_ *testing.T, rec ports.RuntimeBootstrap) { r.Put(rec) },
			Delete: func(_ *testing.T, ns, id string) { r.Delete(ns, id) }}
	})
}
