package contract

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// ConfiguratorFixture is a runtime the configurator can reach and one it cannot.
type ConfiguratorFixture struct {
	Configurator ports.RuntimeConfigurator
	// RuntimeID has a kubeconfig that works; Unreachable one whose kubeconfig Secret does not exist.
	RuntimeID, Unreachable string
	// Admins lists every user bound to cluster-admin in the runtime (the operator's and hand-made bindings).
	Admins func(t *testing.T) []string
	// AddManual binds user to cluster-admin by hand (without the operator's label).
	AddManual func(t *testing.T, user string)
}

// RunRuntimeConfiguratorContract runs the RuntimeConfigurator contract against fixtures made by newFixture.
func RunRuntimeConfiguratorContract(t *testing.T, newFixture func(t *testing.T) ConfiguratorFixture) {
	t.Run("administrators match the config exactly; hand-made bindings are never touched", func(t *testing.T) {
		f := newFixture(t)
		configure := func(admins ...string) {
			t.Helper()
			require.NoError(t, f.Configurator.Configure(t.Context(), ports.RuntimeConfig{RuntimeID: f.RuntimeID, Administrators: admins}))
		}
		f.AddManual(t, "break-glass@example.com")
		configure("a@example.com", "b@example.com")
		require.ElementsMatch(t, []string{"a@example.com", "b@example.com", "break-glass@example.com"}, f.Admins(t))
		configure("a@example.com", "b@example.com") // idempotent
		require.ElementsMatch(t, []string{"a@example.com", "b@example.com", "break-glass@example.com"}, f.Admins(t))
		configure("b@example.com")
		require.ElementsMatch(t, []string{"b@example.com", "break-glass@example.com"}, f.Admins(t))
		configure()
		require.ElementsMatch(t, []string{"break-glass@example.com"}, f.Admins(t))
	})
	t.Run("a runtime without a usable kubeconfig is unreachable", func(t *testing.T) {
		f := newFixture(t)
		err := f.Configurator.Configure(t.Context(), ports.RuntimeConfig{RuntimeID: f.Unreachable, Administrators: []string{"a@example.com"}})
		require.True(t, errors.Is(err, ports.ErrRuntimeUnreachable), "Configure: %v", err)
	})
}
