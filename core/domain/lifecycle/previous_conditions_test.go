package lifecycle_test

import (
	"strings"
	"testing"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
)

// TestPreviousManagersConditions: the condition types and reasons of the previous infrastructure manager that this
// operator can tell about are reported next to its own: the dedicated audit log tenant, the registry caches, and the
// reasons why the shoot cannot be provisioned.
func TestPreviousManagersConditions(t *testing.T) {
	type want struct {
		status  string // "True", "False", "Unknown"; "" means not reported
		reason  string
		message string // a part of it
	}
	status := func(c lc.Condition) string {
		switch {
		case c.Unknown:
			return "Unknown"
		case c.Status:
			return "True"
		}
		return "False"
	}
	for _, tc := range []struct {
		reason string
		in     func() lc.Input
		typ    string
		want   want
	}{
		{reason: "a dedicated tenant on a shoot in sync", typ: lc.ConditionCustomAuditLogConfigured,
			in: func() lc.Input {
				it := intent()
				it.AuditLogAccess, it.DedicatedAuditLog = true, "auditlog-eu10-3"
				return lc.Input{Intent: it, Shoot: reconciled()}
			}, want: want{"True", lc.ReasonCustomAuditLogConfigured, "auditlog-eu10-3"}},
		{reason: "a dedicated tenant claimed, the shoot not yet changed", typ: lc.ConditionCustomAuditLogConfigured,
			in: func() lc.Input {
				it := intent()
				it.AuditLogAccess, it.DedicatedAuditLog, it.ShootInSync = true, "auditlog-eu10-3", false
				return lc.Input{Intent: it, Shoot: reconciled()}
			}, want: want{"Unknown", lc.ReasonCustomAuditLogConfigured, "configuring the shoot"}},
		{reason: "no dedicated tenant: not reported", typ: lc.ConditionCustomAuditLogConfigured,
			in: func() lc.Input { return lc.Input{Intent: intent(), Shoot: reconciled()} }},
		{reason: "no tenant in the pool for a new shoot", typ: lc.ConditionProvisioned,
			in: func() lc.Input {
				it := intent()
				it.AuditLogAccess = true
				it.Wait = &lc.Wait{Step: lc.StepClaimAuditLog, Reason: lc.ReasonAuditLogPoolEmpty, Message: "no free tenant in eu-central-1"}
				return lc.Input{Intent: it}
			}, want: want{"False", lc.ReasonCustomAuditLogError, "no free tenant"}},
		{reason: "a Runtime that cannot be converted", typ: lc.ConditionProvisioned,
			in: func() lc.Input {
				it := intent()
				it.Invalid = &lc.Problem{Field: "spec.shoot.provider.workers[0]", Message: "bad machine type (InvalidWorkers)"}
				return lc.Input{Intent: it, Shoot: reconciled()}
			}, want: want{"False", lc.ReasonConversionError, "bad machine type"}},
		{reason: "registry caches on a shoot in sync", typ: lc.ConditionRegistryCacheConfigured,
			in: func() lc.Input {
				it := intent()
				it.RegistryCaches = 2
				return lc.Input{Intent: it, Shoot: reconciled()}
			}, want: want{"True", lc.ReasonRegistryCacheConfigured, "configured"}},
		{reason: "registry cache credentials refused", typ: lc.ConditionRegistryCacheConfigured,
			in: func() lc.Input {
				it := intent()
				it.RegistryCaches = 1
				it.Invalid = &lc.Problem{Field: "spec.imageRegistryCache[0]", Message: "not a copy (ForeignRegistryCredentials)", Reason: "ForeignRegistryCredentials"}
				return lc.Input{Intent: it, Shoot: reconciled()}
			}, want: want{"False", lc.ReasonRegistryCacheGardenClusterConfigFailed, "not a copy"}},
		{reason: "registry caches while the shoot is changed: left as it was", typ: lc.ConditionRegistryCacheConfigured,
			in: func() lc.Input {
				it := intent()
				it.RegistryCaches, it.ShootInSync = 1, false
				return lc.Input{Intent: it, Shoot: reconciled()}
			}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var got *lc.Condition
			for _, c := range lc.Conditions(tc.in(), nil) {
				if c.Type == tc.typ {
					got = &c
				}
			}
			switch {
			case tc.want.status == "" && got != nil:
				t.Errorf("%s reported: %+v", tc.typ, *got)
			case tc.want.status == "":
			case got == nil:
				t.Errorf("%s not reported", tc.typ)
			case status(*got) != tc.want.status || got.Reason != tc.want.reason || !strings.Contains(got.Message, tc.want.message):
				t.Errorf("%s: %s %s %q; want %s %s with %q", tc.typ, status(*got), got.Reason, got.Message, tc.want.status, tc.want.reason, tc.want.message)
			}
		})
	}
}
