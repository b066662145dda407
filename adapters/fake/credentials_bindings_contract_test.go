package fake_test

import (
	"fmt"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
)

func TestCredentialsBindingsContract(t *testing.T) {
	contract.RunCredentialsBindingsContract(t, func(t *testing.T) contract.BindingsFixture {
		b := fake.NewCredentialsBindings(nil)
		n := 0
		return contract.BindingsFixture{
			Bindings: b,
			Create: func(_ *testing.T, labels map[string]string) string {
				n++
				name := fmt.Sprintf("binding-%d", n)
				b.Create(name, labels)
				return name
			},
			Labels:   func(_ *testing.T, name string) map[string]string { return b.Labels(name) },
			Relabel:  func(_ *testing.T, name, key, value string) { b.SetLabel(name, key, value) },
			PutShoot: func(_ *testing.T, shootName, binding string) { b.Use(shootName, binding) },
		}
	})
}
