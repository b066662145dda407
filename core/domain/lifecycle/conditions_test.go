package lifecycle_test

import (
	"reflect"
	"testing"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// A pass that configures the runtime and a pass that trusts the configuration reached earlier report the same
// conditions: a restart trusts, and must not rewrite the status of every Runtime.
func TestConfiguredAndTrustedPassesReportTheSameConditions(t *testing.T) {
	for _, bootstrap := range []bool{false, true} {
		in := lc.Input{Intent: intent(), Access: lc.Access{SecretExists: true,
			Configuration: lc.Configuration{DesiredHash: "c3", AppliedHash: "c3", Bootstrap: bootstrap}}}
		res := &runtimeconfig.Result{
			Namespace:        runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, "Namespace kyma-system exists (created)."),
			ProvisioningInfo: runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "ConfigMap applied."),
			OIDC:             runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "2 OpenIDConnect resources are configured."),
			Administrators:   runtimeconfig.Done(runtimeconfig.ReasonAdministratorsConfigured, "3 administrators are bound to cluster-admin."),
			Bootstrap:        runtimeconfig.Done(runtimeconfig.ReasonBootstrapCompleted, "4 manifests applied."),
		}
		configured, trusted := lc.Conditions(in, res), lc.Conditions(in, nil)
		if bootstrap {
			// The trusting pass leaves Bootstrapped as it was (see TestTrustingPassKeepsARefusedBootstrap).
			configured = configured[:len(configured)-1]
		}
		if !reflect.DeepEqual(configured, trusted) {
			t.Fatalf("bootstrap %v: configured pass\n%v\ntrusting pass\n%v", bootstrap, configured, trusted)
		}
		if len(trusted) != 5 {
			t.Fatalf("bootstrap %v: %d conditions: %v", bootstrap, len(trusted), trusted)
		}
	}
}

// A refused bootstrap set holds nothing up, so its hash is recorded as reached; a pass that trusts the record (every
// restart) must not report the set Completed: it leaves the condition the configuring pass wrote.
func TestTrustingPassKeepsARefusedBootstrap(t *testing.T) {
	in := lc.Input{Intent: intent(), Access: lc.Access{SecretExists: true,
		Configuration: lc.Configuration{DesiredHash: "c3", AppliedHash: "c3", Bootstrap: true}}}
	for _, c := range lc.Conditions(in, nil) {
		if c.Type == lc.ConditionBootstrapped {
			t.Errorf("a trusting pass reports %+v; a refused set would read as %s after a restart", c, runtimeconfig.ReasonBootstrapCompleted)
		}
	}
}

// A part that did not reach its state keeps the adapter's words: they say what went wrong.
func TestAFailedPartKeepsItsMessage(t *testing.T) {
	in := lc.Input{Intent: intent(), Access: lc.Access{Configuration: lc.Configuration{DesiredHash: "c3"}}}
	res := &runtimeconfig.Result{
		Namespace:        runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, "x"),
		ProvisioningInfo: runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "x"),
		OIDC:             runtimeconfig.Failed(runtimeconfig.ReasonOIDCNotServed, "no CRD yet"),
		Administrators:   runtimeconfig.Failed(runtimeconfig.ReasonConfigurationError, "binding refused"),
	}
	got := map[string]lc.Condition{}
	for _, c := range lc.Conditions(in, res) {
		got[c.Type] = c
	}
	if c := got[lc.ConditionOidcAndConfigMapConfigured]; c.Status || c.Message != "no CRD yet" {
		t.Fatalf("OIDC condition %+v", c)
	}
	if c := got[lc.ConditionConfigured]; c.Status || c.Message != "binding refused" {
		t.Fatalf("Configured condition %+v", c)
	}
}

// Reserved administrator names stay reported by a pass that trusts the reached configuration (every restart), in
// the words of the configuring pass.
func TestTrustingPassKeepsReservedAdministrators(t *testing.T) {
	it := intent()
	it.BoundAdministrators, it.ReservedAdministrators = 1, []string{"system:anonymous"}
	in := lc.Input{Intent: it, Access: lc.Access{SecretExists: true, Configuration: lc.Configuration{DesiredHash: "c3", AppliedHash: "c3"}}}
	configured := lc.Conditions(in, &runtimeconfig.Result{
		Namespace:        runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, ""),
		ProvisioningInfo: runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, ""),
		OIDC:             runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, ""),
		Administrators:   runtimeconfig.AdministratorsOutcome(1, []string{"system:anonymous"}),
	})
	trusted := lc.Conditions(in, nil)
	find := func(cs []lc.Condition) lc.Condition {
		for _, c := range cs {
			if c.Type == lc.ConditionConfigured {
				return c
			}
		}
		t.Fatalf("no Configured condition in %v", cs)
		return lc.Condition{}
	}
	if c := find(trusted); c != find(configured) || c.Reason != string(runtimeconfig.ReasonAdministratorNamesReserved) || !c.Status {
		t.Errorf("trusting pass Configured %+v, configuring pass %+v; want both True/AdministratorNamesReserved", c, find(configured))
	}
}

// A cluster that keeps an audit log its configuration has no tenant for says so in AuditLogKept, whatever else is
// reported; without it the condition is not reported (the controller removes an earlier one).
func TestAuditLogKeptIsReported(t *testing.T) {
	it := intent()
	in := lc.Input{Intent: it, Access: lc.Access{SecretExists: true}}
	for _, c := range lc.Conditions(in, nil) {
		if c.Type == lc.ConditionAuditLogKept {
			t.Errorf("reported without a kept audit log: %+v", c)
		}
	}
	in.Intent.AuditLogKept = "no audit log tenant is configured for provider aws in region eu-west-1"
	var got *lc.Condition
	for _, c := range lc.Conditions(in, nil) {
		if c.Type == lc.ConditionAuditLogKept {
			got = &c
		}
	}
	if got == nil || !got.Status || got.Reason != lc.ReasonAuditLogTenantMissing || got.Message != in.Intent.AuditLogKept {
		t.Errorf("condition %+v, want AuditLogKept true, reason %s, the kept message", got, lc.ReasonAuditLogTenantMissing)
	}
}
