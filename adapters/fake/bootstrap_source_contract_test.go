package fake_test

import (
	"errors"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

func TestBootstrapSourceContract(t *testing.T) {
	contract.RunBootstrapSourceContract(t, func(_ *testing.T, o contract.BootstrapSourceOptions) contract.BootstrapSourceFixture {
		allowed := []runtimeconfig.BootstrapKind{{Kind: "Namespace"}}
		pull := ""
		if o.PullSecret {
			pull = "kcp-system/bootstrap-pull"
		}
		s := fake.NewBootstrapSource("kcp-system/kim-bootstrap", pull, allowed)
		return contract.BootstrapSourceFixture{Source: s, Allowed: allowed,
			PutManifests: func(_ *testing.T, objects []runtimeconfig.BootstrapObject) { s.SetManifests(objects) },
			PutUnusableManifests: func(*testing.T) {
				s.SetUnusableManifests("a.yaml: document 1 needs apiVersion, kind and metadata.name")
			},
			RemoveManifests: func(*testing.T) { s.RemoveManifests() },
			PutPullSecret: func(_ *testing.T, typ string, labels map[string]string, data map[string][]byte) {
				s.SetPullSecret(typ, labels, data)
			},
			FailReads: func(*testing.T) { s.FailReads(errors.New("the KCP does not answer")) },
		}
	})
}
