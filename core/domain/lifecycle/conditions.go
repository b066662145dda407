package lifecycle

import (
	"fmt"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// Condition types reported besides Ready. They are those of the previous infrastructure manager, with its reasons
// where it had one, so that dashboards and SRE tooling written for it keep working (docs/runtime-configuration.md).
const (
	ConditionProvisioned                = "Provisioned"
	ConditionKubeconfigReady            = "KubeconfigReady"
	ConditionKymaSystemNSCreated        = "KymaSystemNSCreated"
	ConditionOidcAndConfigMapConfigured = "OidcAndConfigMapConfigured"
	ConditionConfigured                 = "Configured"
	// ConditionBootstrapped is reported only where the landscape configures bootstrap manifests.
	ConditionBootstrapped = "Bootstrapped"
	// ConditionCustomAuditLogConfigured is reported only for runtimes with a dedicated audit log tenant, and
	// ConditionRegistryCacheConfigured only for runtimes with registry caches (the previous manager's names).
	ConditionCustomAuditLogConfigured = "CustomAuditLogConfigured"
	ConditionRegistryCacheConfigured  = "RegistryCacheConfigured"
	// ConditionDeprovisioned is reported while a Runtime is deleted (the controller's teardown).
	ConditionDeprovisioned = "Deprovisioned"
	// ConditionAdoptionReviewRequired is reported (true) only while the adoption review holds the operator's first
	// changes to a shoot adopted from the previous manager; the state stays Ready while KEB has not changed the
	// Runtime (docs/operations/migration.md). kstatus and KEB ignore it.
	ConditionAdoptionReviewRequired = "AdoptionReviewRequired"
	// ConditionAuditLogKept is reported (true) only while the cluster keeps an audit log that the landscape's
	// configuration has no tenant for (its region is missing from it): the audit trail stays on, but the
	// configuration needs a fix. Not a condition of the previous manager, which kept such a log silently.
	ConditionAuditLogKept = "AuditLogKept"
	// ReasonAuditLogTenantMissing is the reason of ConditionAuditLogKept.
	ReasonAuditLogTenantMissing = "AuditLogTenantMissing"
)

// Stable reasons of Provisioned and KubeconfigReady (the configuration conditions use runtimeconfig's reasons).
const (
	ReasonShootCreationCompleted = "ShootCreationCompleted"
	ReasonShootCreationPending   = "Pending"
	ReasonGardenerError          = "GardenerErr"
	ReasonGardenerClusterCreated = "GardenerClusterCRCreated"
	ReasonGardenerClusterReady   = "GardenerClusterCRReady"
	// ReasonConversionError: the Runtime cannot be turned into a shoot spec (Provisioned false).
	ReasonConversionError = "ConversionErr"
	// ReasonCustomAuditLogError: no dedicated audit log tenant can be had for the shoot to be created (Provisioned
	// false); ReasonCustomAuditLogConfigured is the reason of CustomAuditLogConfigured.
	ReasonCustomAuditLogError      = "CustomAuditLogErr"
	ReasonCustomAuditLogConfigured = "CustomAuditLogConfigured"
	// Reasons of RegistryCacheConfigured.
	ReasonRegistryCacheConfigured                = "RegistryCacheConfigured"
	ReasonRegistryCacheGardenClusterConfigFailed = "RegistryCacheGardenClusterConfigurationFailed"
	registryCacheCredentialsRefused              = "ForeignRegistryCredentials" // shoot.ReasonForeignRegistryCredentials
	// Reasons of Deprovisioned: the GardenerCluster (and kubeconfig) are being removed, the shoot's deletion has
	// begun (here: it is marked for deletion after its window), or a request failed.
	ReasonGardenerClusterDeleted = "GardenerClusterCRDeleted"
	ReasonGardenerShootDeleted   = "GardenerShootDeleted"
)

// Condition is one condition besides Ready.
type Condition struct {
	Type   string
	Status bool
	// Unknown reports the status Unknown (Status is then ignored): the previous manager's "in progress".
	Unknown bool
	Reason  string
	Message string
}

// Conditions returns the conditions besides Ready that the observation supports, and those of the runtime
// configuration when it was attempted in this pass (res) or is known to be reached. Conditions it cannot tell
// about are left out: the caller keeps what it reported before.
func Conditions(in Input, res *runtimeconfig.Result) []Condition {
	out := []Condition{provisioned(in), kubeconfigReady(in)}
	if c, ok := customAuditLogConfigured(in); ok {
		out = append(out, c)
	}
	if c, ok := registryCacheConfigured(in); ok {
		out = append(out, c)
	}
	if h := in.Intent.AdoptionHold; h != "" {
		out = append(out, Condition{Type: ConditionAdoptionReviewRequired, Status: true, Reason: string(ReasonAdoptionReviewRequired), Message: h})
	}
	if k := in.Intent.AuditLogKept; k != "" {
		out = append(out, Condition{Type: ConditionAuditLogKept, Status: true, Reason: ReasonAuditLogTenantMissing, Message: k})
	}
	c := in.Access.Configuration
	switch {
	case res != nil:
		oidcAndCM := res.ProvisioningInfo
		if oidcAndCM.Done {
			oidcAndCM = res.OIDC
		}
		out = append(out, fromOutcome(ConditionKymaSystemNSCreated, res.Namespace),
			fromOutcome(ConditionOidcAndConfigMapConfigured, oidcAndCM), fromOutcome(ConditionConfigured, res.Administrators))
		if c.Bootstrap && res.Bootstrap.Reason != "" {
			out = append(out, fromOutcome(ConditionBootstrapped, res.Bootstrap))
		}
	case c.AppliedHash != "" && c.AppliedHash == c.DesiredHash:
		// Bootstrapped is left as the configuring pass reported it: a reached hash also covers a bootstrap set that
		// was refused or invalid (it holds nothing up), and a restart must not turn that refusal into Completed.
		out = append(out, reached(ConditionKymaSystemNSCreated), reached(ConditionOidcAndConfigMapConfigured), reachedAdministrators(in))
	}
	if c.Bootstrap && c.BootstrapHold != nil && (res == nil || res.Bootstrap.Reason == "") {
		// A held runtime says so whether or not this pass configured it: most passes of a held runtime do not.
		out = append(out, fromOutcome(ConditionBootstrapped, *c.BootstrapHold))
	}
	return out
}

// reachedConditions are the conditions of a configuration part that holds. A pass that configured the runtime and
// a pass that trusts an earlier one report the same words: otherwise every restart, which trusts, would rewrite the
// status of every Runtime (found by the fleet harness: 30 % of the Runtimes patched after a restart).
var reachedConditions = map[string]Condition{
	ConditionKymaSystemNSCreated: {ConditionKymaSystemNSCreated, true, false, string(runtimeconfig.ReasonKymaSystemNSReady), "Namespace kyma-system exists."},
	ConditionOidcAndConfigMapConfigured: {ConditionOidcAndConfigMapConfigured, true, false, string(runtimeconfig.ReasonOidcAndConfigMapsConfigured),
		"The kyma-provisioning-info ConfigMap and the OpenIDConnect resources are configured."},
	ConditionConfigured: {ConditionConfigured, true, false, string(runtimeconfig.ReasonAdministratorsConfigured), "Administrators are bound to cluster-admin."},
	ConditionBootstrapped: {ConditionBootstrapped, true, false, string(runtimeconfig.ReasonBootstrapCompleted),
		"The bootstrap manifests are applied and their Deployments are available."},
}

func reached(t string) Condition { return reachedConditions[t] }

// reachedAdministrators is Configured of a reached configuration: refused administrator names stay reported after
// a restart, in the words of the pass that configured them.
func reachedAdministrators(in Input) Condition {
	if r := in.Intent.ReservedAdministrators; len(r) > 0 {
		return fromOutcome(ConditionConfigured, runtimeconfig.AdministratorsOutcome(in.Intent.BoundAdministrators, r))
	}
	return reached(ConditionConfigured)
}

func provisioned(in Input) Condition {
	s := in.Shoot
	switch w := in.Intent.Wait; {
	case in.Intent.Invalid != nil:
		return Condition{ConditionProvisioned, false, false, ReasonConversionError, in.Intent.Invalid.Message}
	case !s.Exists && w != nil && w.Reason == ReasonAuditLogPoolEmpty:
		return Condition{ConditionProvisioned, false, false, ReasonCustomAuditLogError, w.Message}
	}
	switch {
	case s.EverSucceeded():
		return Condition{ConditionProvisioned, true, false, ReasonShootCreationCompleted, fmt.Sprintf("Gardener created shoot %s.", s.Name)}
	case s.Exists && s.Failed():
		return Condition{ConditionProvisioned, false, false, ReasonGardenerError, s.GardenerMessage() + "."}
	case s.Exists:
		return Condition{ConditionProvisioned, false, false, ReasonShootCreationPending, s.GardenerMessage() + "."}
	}
	return Condition{ConditionProvisioned, false, false, ReasonShootCreationPending, fmt.Sprintf("Shoot %s does not exist yet.", in.Intent.ShootName)}
}

func kubeconfigReady(in Input) Condition {
	a := in.Access
	switch {
	case a.SecretExists:
		return Condition{ConditionKubeconfigReady, true, false, ReasonGardenerClusterReady, "The kubeconfig Secret exists."}
	case a.GardenerClusterInSync:
		return Condition{ConditionKubeconfigReady, false, false, ReasonGardenerClusterCreated,
			fmt.Sprintf("GardenerCluster %s exists; waiting for its kubeconfig Secret.", in.Intent.RuntimeID)}
	}
	return Condition{ConditionKubeconfigReady, false, false, ReasonShootCreationPending, "No kubeconfig yet: the GardenerCluster is created once Gardener advertises the API server."}
}

func fromOutcome(t string, o runtimeconfig.Outcome) Condition {
	if c, ok := reachedConditions[t]; ok && o.Done && c.Reason == string(o.Reason) {
		return c
	}
	return Condition{Type: t, Status: o.Done, Reason: string(o.Reason), Message: o.Message}
}

// customAuditLogConfigured is the previous manager's condition of a runtime with a dedicated audit log tenant: true
// once the shoot holds the spec that configures the tenant, unknown while it is being configured. Runtimes without
// one do not report it (ok false).
func customAuditLogConfigured(in Input) (Condition, bool) {
	name := in.Intent.DedicatedAuditLog
	if name == "" {
		return Condition{}, false
	}
	if in.Shoot.Exists && in.Intent.ShootInSync {
		return Condition{Type: ConditionCustomAuditLogConfigured, Status: true, Reason: ReasonCustomAuditLogConfigured,
			Message: fmt.Sprintf("The shoot is configured with the dedicated audit log tenant %s.", name)}, true
	}
	return Condition{Type: ConditionCustomAuditLogConfigured, Unknown: true, Reason: ReasonCustomAuditLogConfigured,
		Message: fmt.Sprintf("Dedicated audit log tenant %s claimed, configuring the shoot.", name)}, true
}

// registryCacheConfigured is the previous manager's condition of a runtime with registry caches: true once the
// shoot holds them, false when their credentials are refused. Runtimes without caches do not report it, and while
// the shoot is being changed it is left as it was (ok false).
func registryCacheConfigured(in Input) (Condition, bool) {
	if in.Intent.RegistryCaches == 0 {
		return Condition{}, false
	}
	switch p := in.Intent.Invalid; {
	case p != nil && p.Reason == registryCacheCredentialsRefused:
		return Condition{Type: ConditionRegistryCacheConfigured, Reason: ReasonRegistryCacheGardenClusterConfigFailed, Message: p.Message}, true
	case p == nil && in.Shoot.Exists && in.Intent.ShootInSync:
		return Condition{Type: ConditionRegistryCacheConfigured, Status: true, Reason: ReasonRegistryCacheConfigured,
			Message: "Registry cache configured successfully."}, true
	}
	return Condition{}, false
}
