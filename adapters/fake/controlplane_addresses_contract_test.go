package fake_test

import (
	"context"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
)

func TestControlPlaneAddressesContract(t *testing.T) {
	contract.RunControlPlaneAddressesContract(t, func(t *testing.T) contract.AddressesFixture {
		a := &fake.ControlPlaneAddresses{}
		return contract.AddressesFixture{
			Addresses:      a,
			Publish:        func(_ context.Context, cidrs []string) error { a.Publish(cidrs); return nil },
			PublishInvalid: func(context.Context) error { a.PublishInvalid(); return nil },
		}
	})
}
