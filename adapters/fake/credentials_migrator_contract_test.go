package fake_test

import (
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
)

func TestCredentialsMigratorContract(t *testing.T) {
	contract.RunCredentialsMigratorContract(t, func(t *testing.T) contract.CredentialsMigratorFixture {
		m := fake.NewCredentialsMigrator()
		m.Credentials = map[string]string{"legacy": "secret-1", "binding": "secret-1", "other": "secret-2"}
		return contract.CredentialsMigratorFixture{
			Migrator: m,
			PutLegacy: func(_ *testing.T, name string, managed bool) string {
				m.Put(name, "legacy", "", managed)
				return "binding"
			},
			Bindings:         func(_ *testing.T, name string) (string, string) { return m.Bindings(name) },
			OtherCredentials: "other",
		}
	})
}
