package setup

import (
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// SelfService are the ports of the customer self-service controllers (issue #15): the registry cache sync and the
// pool of dedicated audit log tenants. A nil member means the feature is switched off by configuration and its
// controller sets nothing up.
type SelfService struct {
	RegistryCache *RegistryCachePorts
	AuditLog      *AuditLogPorts
	// ObserveShoot reads the operator's marks and Gardener's reconcile state off a shoot (for watch filters).
	ObserveShoot func(*gardencorev1beta1.Shoot) shootstate.Shoot
}

// RegistryCachePorts are what the registry cache controller syncs with.
type RegistryCachePorts struct {
	Runtimes ports.RegistryCacheRuntimes
	// Source reads RegistryCacheConfig objects in runtimes. This is where the per-runtime client is made; the
	// composition root decides how (see operator/app).
	Source ports.RegistryCacheSource
	Garden ports.RegistryCacheGarden
	// Ledger records each runtime's garden copies in the KCP (the operator never lists the project's Secrets).
	Ledger ports.RegistryCacheLedger
	// Resolver checks upstream host names; nil when registryCache.checkUpstreamDNS is false.
	Resolver ports.UpstreamResolver
	// Interval is the periodic sync of every runtime; Workers the runtimes synced at the same time.
	Interval time.Duration
	Workers  int
	// ListenerPort is the port of the Runtime Watcher's event listener; 0: none.
	ListenerPort int
}

// AuditLogPorts are what dedicated audit log tenants are claimed, kept and released with.
type AuditLogPorts struct {
	Pool ports.AuditLogPool
	// Kind is the AuditLog resource the pool is made of (watched in the manager's cache); Namespace is the pool's
	// namespace ("" for a cluster-scoped pool).
	Kind      schema.GroupVersionKind
	Namespace string
	// TenantName names a tenant of the pool from its object's namespace and name (the name Pool uses).
	TenantName  func(namespace, name string) string
	Runtimes    ports.AuditLogRuntimes
	Credentials ports.AuditLogCredentials
	Secrets     ports.RuntimeSecretWriter
	// CredentialsPolicy says which KCP Secrets are copied into runtimes as read credentials.
	CredentialsPolicy auditlog.CredentialsPolicy
}
