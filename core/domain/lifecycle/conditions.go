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
)

// Stable reasons of Provisioned and KubeconfigReady (the configuration conditions use runtimeconfig's reasons).
const (
	ReasonShootCreationCompleted = "ShootCreationCompleted"
	ReasonShootCreationPending   = "Pending"
	ReasonGardenerError          = "GardenerErr"
	ReasonGardenerClusterCreated = "GardenerClusterCRCreated"
	ReasonGardenerClusterReady   = "GardenerClusterCRReady"
)

// Condition is one condition besides Ready.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// Conditions returns the conditions besides Ready that the observation supports, and those of the runtime
// configuration when it was attempted in this pass (res) or is known to be reached. Conditions it cannot tell
// about are left out: the caller keeps what it reported before.
func Conditions(in Input, res *runtimeconfig.Result) []Condition {
	out := []Condition{provisioned(in), kubeconfigReady(in)}
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
		out = append(out, reached(ConditionKymaSystemNSCreated), reached(ConditionOidcAndConfigMapConfigured), reached(ConditionConfigured))
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
	ConditionKymaSystemNSCreated: {ConditionKymaSystemNSCreated, true, string(runtimeconfig.ReasonKymaSystemNSReady), "Namespace kyma-system exists."},
	ConditionOidcAndConfigMapConfigured: {ConditionOidcAndConfigMapConfigured, true, string(runtimeconfig.ReasonOidcAndConfigMapsConfigured),
		"The kyma-provisioning-info ConfigMap and the OpenIDConnect resources are configured."},
	ConditionConfigured: {ConditionConfigured, true, string(runtimeconfig.ReasonAdministratorsConfigured), "Administrators are bound to cluster-admin."},
	ConditionBootstrapped: {ConditionBootstrapped, true, string(runtimeconfig.ReasonBootstrapCompleted),
		"The bootstrap manifests are applied and their Deployments are available."},
}

func reached(t string) Condition { return reachedConditions[t] }

func provisioned(in Input) Condition {
	s := in.Shoot
	switch {
	case s.EverSucceeded():
		return Condition{ConditionProvisioned, true, ReasonShootCreationCompleted, fmt.Sprintf("Gardener created shoot %s.", s.Name)}
	case s.Exists && s.Failed():
		return Condition{ConditionProvisioned, false, ReasonGardenerError, s.GardenerMessage() + "."}
	case s.Exists:
		return Condition{ConditionProvisioned, false, ReasonShootCreationPending, s.GardenerMessage() + "."}
	}
	return Condition{ConditionProvisioned, false, ReasonShootCreationPending, fmt.Sprintf("Shoot %s does not exist yet.", in.Intent.ShootName)}
}

func kubeconfigReady(in Input) Condition {
	a := in.Access
	switch {
	case a.SecretExists:
		return Condition{ConditionKubeconfigReady, true, ReasonGardenerClusterReady, "The kubeconfig Secret exists."}
	case a.GardenerClusterInSync:
		return Condition{ConditionKubeconfigReady, false, ReasonGardenerClusterCreated,
			fmt.Sprintf("GardenerCluster %s exists; waiting for its kubeconfig Secret.", in.Intent.RuntimeID)}
	}
	return Condition{ConditionKubeconfigReady, false, ReasonShootCreationPending, "No kubeconfig yet: the GardenerCluster is created once Gardener advertises the API server."}
}

func fromOutcome(t string, o runtimeconfig.Outcome) Condition {
	if c, ok := reachedConditions[t]; ok && o.Done && c.Reason == string(o.Reason) {
		return c
	}
	return Condition{Type: t, Status: o.Done, Reason: string(o.Reason), Message: o.Message}
}
