// Package setup is the contract between the composition root (operator/app) and the controllers: a controller is
// set up from the manager, the garden cluster (for its watches) and the ports the composition root built. No
// controller builds an adapter (operator/controllers/architecture_test.go and depguard enforce it).
package setup

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// Controller is one controller of the operator.
type Controller interface {
	// Name identifies the controller in logs, errors and the --controllers flag.
	Name() string
	// SetupWithManager registers the controller with the KCP manager.
	SetupWithManager(mgr manager.Manager, deps Deps) error
}

// Deps is what a controller is built from.
type Deps struct {
	// Garden is the Gardener project's cluster: its cache is what controllers watch shoots and ConfigMaps on.
	Garden cluster.Cluster
	Ports  Ports
	Settings
}

// Ports are the adapters, built by the composition root only.
type Ports struct {
	Clock        ports.Clock
	Shoots       ports.Shoots
	ShootLister  ports.ShootLister
	Seeds        ports.Seeds
	Credentials  ports.CredentialsMigrator
	Issuer       ports.KubeconfigIssuer
	Secrets      ports.KubeconfigSecretStore
	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	Guard        ports.DeletionGuard
	// Records are the KCP's own records of deletions (DeletionRecord objects).
	Records ports.DeletionRecords
	// Bindings labels the credentials bindings of deleted runtimes as KEB's deprovisioning expects; nil: never.
	Bindings    ports.CredentialsBindings
	ServerClock ports.ServerClock
	Registry    ports.RuntimeRegistry
	// Identities reaches runtimes through their admin kubeconfigs for least-privilege kubeconfigs (ServiceAccounts,
	// RBAC, TokenRequests); IdentitySecrets stores those kubeconfigs in the KCP.
	Identities      ports.RuntimeIdentities
	IdentitySecrets ports.IdentityKubeconfigStore
	// Addresses are the control plane's egress CIDRs; nil when shoot.acl.configMap is not configured.
	Addresses ports.ControlPlaneAddresses
	// AddressesSource is the cache holding the ConfigMap of Addresses and AddressesKey its name (watched so new
	// addresses reach every affected shoot); nil with Addresses.
	AddressesSource cache.Cache
	AddressesKey    client.ObjectKey
	// Bootstrap reads the landscape's bootstrap manifests and pull secret (runtime.bootstrap); nil when none are
	// configured. BootstrapSource is the cache holding them (watched so changed manifests reach every runtime
	// without waiting for its drift period); nil with Bootstrap. BootstrapPullSecret: it holds a pull Secret too.
	Bootstrap           ports.BootstrapSource
	BootstrapSource     cache.Cache
	BootstrapPullSecret bool
	// BootstrapRecords lists what the Runtimes record of the bootstrap manifests (from the manager's cache), for
	// BootstrapRollout (runtime.bootstrap.rollout): a changed set reaches the runtimes in waves. Nil, or a share of
	// 1: every runtime at once.
	BootstrapRecords ports.RuntimeBootstrapLister
	BootstrapRollout runtimeconfig.RolloutPolicy
	// ShootOwner tells the Runtime (namespace, name) a shoot or a ConfigMap of the garden belongs to, from the
	// operator's marks on it (how garden events find their Runtime).
	ShootOwner func(labels, annotations map[string]string) (namespace, name string, ok bool)
	// SelfService are the ports of the registry cache and audit log pool controllers.
	SelfService SelfService
	// RegistryCredentials confirms the copies of registry credentials Runtimes reference (the Runtime controller
	// refuses any other reference); nil: every reference is refused.
	RegistryCredentials ports.RegistryCredentialOwners
}

// Settings are the effective configuration controllers decide with.
type Settings struct {
	// Namespaces are the watched KCP namespaces; the first is the operator's own (the deletion guard lives there).
	Namespaces []string
	// GardenNamespace is the Gardener project's namespace.
	GardenNamespace string
	Shoot           shoot.Config
	Deletion        deletion.Policy
	Kubeconfig      kubeconfig.Policy
	// DriftPeriod is how long a configuration reached inside a runtime is trusted before it is written again
	// (runtime.driftPeriod; 0: lifecycle.DefaultDriftPeriod).
	DriftPeriod time.Duration
	// AdoptOnly holds changes to shoots adopted from the previous system until approved (runtime.adoptOnly).
	AdoptOnly bool
	// StatusProgressInterval is how often at most Gardener's progress alone is written into a Runtime's status
	// (runtime.statusProgressInterval; 0: every change).
	StatusProgressInterval time.Duration
	// RuntimeWorkers, GardenerClusterWorkers and ServiceAccountKubeconfigWorkers are the concurrent reconciles of
	// the controllers.
	RuntimeWorkers, GardenerClusterWorkers, ServiceAccountKubeconfigWorkers int
	// IdentityAccess is the landscape's part of the no-escalation policy of ServiceAccountKubeconfigs.
	IdentityAccess sakubeconfig.AccessPolicy
	// IdentityCleanupTimeout bounds how long a ServiceAccountKubeconfig's deletion waits for an unreachable runtime
	// (0: the domain's default).
	IdentityCleanupTimeout time.Duration
}
