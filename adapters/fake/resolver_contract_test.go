package fake_test

import (
	"errors"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
)

func TestUpstreamResolverContract(t *testing.T) {
	contract.RunUpstreamResolverContract(t, func(*testing.T) contract.ResolverFixture {
		return contract.ResolverFixture{
			Resolver:   fake.Resolver{Unresolvable: map[string]string{"nx.contract.test": "no such host"}},
			Resolvable: "registry.contract.test", Missing: "nx.contract.test",
			Unanswered: fake.Resolver{Err: errors.New("no DNS server answers")},
		}
	})
}
