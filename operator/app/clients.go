package app

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/migrate"
)

// The binaries under operator/cmd build no adapter: what they reach the KCP and the garden with comes from here, so
// the Gardener guard and the adapters are wired in the composition root only
// (operator/controllers/architecture_test.go checks the binaries' imports).

// LoadGardenKubeconfig loads the manager's Gardener kubeconfig (path; empty: the default loading rules) behind the
// client guard of the project in opts: unverified TLS and any request outside the project's allow list are refused
// (docs/operations/gardener-permissions.md).
func LoadGardenKubeconfig(path string, opts Options) (*rest.Config, error) {
	return guard.LoadKubeconfig(path, guard.ProjectPolicy(opts.GardenNamespace()))
}

// NewRestorer builds the restore use case of `kim restore`: the shoots of gardenNamespace through garden behind the
// project's client guard, the Runtimes of namespace through kcp.
func NewRestorer(kcp client.Client, garden *rest.Config, namespace, gardenNamespace string, policy deletion.Policy) (*usecase.Restorer, error) {
	scheme, err := scheme.New()
	if err != nil {
		return nil, err
	}
	gardenCfg, err := guard.Secure(garden, guard.ProjectPolicy(gardenNamespace))
	if err != nil {
		return nil, fmt.Errorf("garden kubeconfig: %w", err)
	}
	gardenClient, err := client.New(gardenCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("garden client: %w", err)
	}
	return &usecase.Restorer{
		Shoots:   &gardener.Shoots{Client: gardenClient, Live: gardenClient, Namespace: gardenNamespace, RuntimeNamespace: namespace},
		Runtimes: &kube.RuntimeRegistry{Live: kcp, Writer: kcp, Namespaces: []string{namespace}},
		Policy:   policy, DefaultNamespace: namespace}, nil
}

// NewMigrationKCPClient is the KCP client of `kim migrate` on cfg: behind the client guard of what migrate may do in
// namespace (migrate.KCPPolicy), with migrate's scheme.
func NewMigrationKCPClient(cfg *rest.Config, namespace string) (client.Client, error) {
	return migrationClient(cfg, migrate.KCPPolicy(namespace), "KCP")
}

// NewMigrationGardenClient is the garden client of `kim migrate` on cfg: it cannot write, every request but reads
// and dry runs in gardenNamespace is refused before it is sent (guard.MigrationPolicy).
func NewMigrationGardenClient(cfg *rest.Config, gardenNamespace string) (client.Client, error) {
	return migrationClient(cfg, guard.MigrationPolicy(gardenNamespace), "garden")
}

func migrationClient(cfg *rest.Config, policy guard.Policy, which string) (client.Client, error) {
	scheme, err := migrate.Scheme()
	if err != nil {
		return nil, err
	}
	secured, err := guard.Secure(cfg, policy)
	if err != nil {
		return nil, fmt.Errorf("%s kubeconfig: %w", which, err)
	}
	c, err := client.New(secured, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", which, err)
	}
	return c, nil
}
