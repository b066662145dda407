package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	lc "github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// TestDrift: a Ready runtime is configured again only when the desired state changed or its drift period passed,
// and until then it asks to be looked at again when the period ends (nothing watches inside the runtime).
func TestDrift(t *testing.T) {
	const period = 10 * time.Minute
	at := func(appliedAgo time.Duration, desired string) lc.Input {
		in := ready()
		in.DriftPeriod = period
		in.Access.Configuration = lc.Configuration{DesiredHash: desired, AppliedHash: "c3", AppliedAt: now.Add(-appliedAgo)}
		return in
	}
	t.Run("unchanged and inside the period: Ready, looked at again when the period ends", func(t *testing.T) {
		d := lc.Decide(at(time.Minute, "c3"), now)
		if d.State != lc.StateReady || d.Action != lc.ActionNone {
			t.Fatalf("got %+v", d)
		}
		// The period is stretched by up to a tenth (by runtime ID) so runtimes do not all come due together.
		if d.RequeueAfter < period-time.Minute || d.RequeueAfter > period+period/10-time.Minute {
			t.Errorf("requeue after %s, want between %s and %s", d.RequeueAfter, period-time.Minute, period+period/10-time.Minute)
		}
		late := lc.Decide(at(time.Minute, "c3"), now.Add(d.RequeueAfter))
		if late.Action != lc.ActionConfigureRuntime {
			t.Errorf("at the requeue time the configuration is due, got %+v", late)
		}
	})
	t.Run("the period passed: configured again although nothing changed", func(t *testing.T) {
		d := lc.Decide(at(period+period/10, "c3"), now)
		if d.Action != lc.ActionConfigureRuntime || d.Reason != lc.ReasonConfiguringRuntime {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("the desired state changed: configured at once", func(t *testing.T) {
		d := lc.Decide(at(time.Second, "c4"), now)
		if d.Action != lc.ActionConfigureRuntime {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("without a configured period the default hour applies", func(t *testing.T) {
		in := at(30*time.Minute, "c3")
		in.DriftPeriod = 0
		if d := lc.Decide(in, now); d.State != lc.StateReady || d.RequeueAfter < 30*time.Minute || d.RequeueAfter > 36*time.Minute {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("a hibernated cluster is not configured (no API server); it is once it woke up", func(t *testing.T) {
		in := at(2*period, "c4")
		in.Shoot.HibernationRequested, in.Shoot.Hibernated = true, true
		if d := lc.Decide(in, now); d.Action != lc.ActionNone || d.State != lc.StateReady {
			t.Errorf("hibernated: %+v", d)
		}
		in.Shoot.HibernationRequested, in.Shoot.Hibernated = false, false
		if d := lc.Decide(in, now); d.Action != lc.ActionConfigureRuntime {
			t.Errorf("woken up: %+v", d)
		}
	})
	t.Run("only Gardener's reconcile time changed: nothing due until the drift period", func(t *testing.T) {
		in := at(time.Second, "c4")
		in.Access.Configuration.OnlyReconcileTimeDiffers = true
		d := lc.Decide(in, now)
		if d.State != lc.StateReady || d.Action != lc.ActionNone || d.RequeueAfter < period-time.Second {
			t.Fatalf("%+v, want Ready, nothing written, a look again when the drift period is over", d)
		}
		in = at(period+period/10, "c4")
		in.Access.Configuration.OnlyReconcileTimeDiffers = true
		if d := lc.Decide(in, now); d.Action != lc.ActionConfigureRuntime {
			t.Errorf("after the drift period the reconcile time is written with the rest: %+v", d)
		}
		in = at(time.Second, "c4")
		if d := lc.Decide(in, now); d.Action != lc.ActionConfigureRuntime || d.State == lc.StateReady {
			t.Errorf("any other change is configured at once: %+v", d)
		}
	})
	t.Run("runtimes configured together come due at different times", func(t *testing.T) {
		seen := map[time.Duration]bool{}
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			in := at(0, "c3")
			in.Intent.RuntimeID, in.Shoot.Marks.RuntimeID = id, id
			d := lc.Decide(in, now)
			if d.State != lc.StateReady {
				t.Fatalf("got %+v", d)
			}
			seen[d.RequeueAfter] = true
		}
		if len(seen) < 3 {
			t.Errorf("five runtimes share %d requeue times: %v", len(seen), seen)
		}
	})
}

func TestConfigureFailures(t *testing.T) {
	configure := lc.Decide(func() lc.Input { in := ready(); in.Access.Configuration.DesiredHash = "c4"; return in }(), now)
	cases := []struct {
		reason string
		err    lc.ActionError
		want   brief
		trans  bool
	}{
		{"an API server that does not answer: a stable reason, retried with backoff",
			lc.ActionError{Reason: lc.ReasonRuntimeAPIServerUnreachable, Message: "context deadline exceeded"},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StatePending, lc.ReasonRuntimeAPIServerUnreachable, 0}, true},
		{"another failure on the way keeps the generic reason", lc.ActionError{Message: "conflict"},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StatePending, lc.ReasonRuntimeConfigFailed, 0}, true},
		{"bootstrap Deployments not available yet: work in progress, looked at again without backoff",
			lc.ActionError{Reason: lc.ReasonBootstrapInProgress, Message: "waiting for Deployment x", RetryAfter: 15 * time.Second},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StatePending, lc.ReasonBootstrapInProgress, 15 * time.Second}, false},
		{"an object the runtime refuses as invalid: Failed, rechecked slowly",
			lc.ActionError{Permanent: true, Message: "spec.issuerURL: Invalid value"},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StateFailed, lc.ReasonRuntimeConfigFailed, lc.SlowRecheck}, false},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := lc.ActionFailed(configure, tc.err)
			if diff := cmp.Diff(tc.want, briefOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Transient != tc.trans || !strings.Contains(got.Message, tc.err.Message) {
				t.Errorf("transient %v (want %v), message %q", got.Transient, tc.trans, got.Message)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	byType := func(cs []lc.Condition) map[string]lc.Condition {
		out := map[string]lc.Condition{}
		for _, c := range cs {
			out[c.Type] = c
		}
		return out
	}
	t.Run("Ready and configured: every condition true with the previous system's reasons", func(t *testing.T) {
		in := ready()
		in.Access.Configuration.Bootstrap = true
		got := byType(lc.Conditions(in, nil))
		want := map[string]string{lc.ConditionProvisioned: "ShootCreationCompleted", lc.ConditionKubeconfigReady: "GardenerClusterCRReady",
			lc.ConditionKymaSystemNSCreated: "KymaSystemNSReady", lc.ConditionOidcAndConfigMapConfigured: "OidcAndConfigMapsConfigured",
			lc.ConditionConfigured: "AdministratorsConfigured"}
		for typ, reason := range want {
			if c, ok := got[typ]; !ok || !c.Status || c.Reason != reason {
				t.Errorf("%s: %+v, want True/%s", typ, c, reason)
			}
		}
		if c, ok := got[lc.ConditionBootstrapped]; ok {
			t.Errorf("Bootstrapped %+v: a trusting pass leaves it as the configuring pass wrote it", c)
		}
	})
	t.Run("a fresh runtime: Provisioned and KubeconfigReady pending, the configuration not reported yet", func(t *testing.T) {
		in := lc.Input{Intent: intent()}
		got := byType(lc.Conditions(in, nil))
		if len(got) != 2 || got[lc.ConditionProvisioned].Status || got[lc.ConditionKubeconfigReady].Status ||
			got[lc.ConditionProvisioned].Reason != lc.ReasonShootCreationPending {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("Gardener failed the creation", func(t *testing.T) {
		in := creating()
		in.Shoot.LastOperation.State = shootstate.StateFailed
		if c := byType(lc.Conditions(in, nil))[lc.ConditionProvisioned]; c.Status || c.Reason != lc.ReasonGardenerError {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("an attempt reports part by part: OIDC not served, the rest done", func(t *testing.T) {
		in := ready()
		in.Access.Configuration.DesiredHash = "c4"
		res := &runtimeconfig.Result{Namespace: runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, "ok"),
			ProvisioningInfo: runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "ok"),
			OIDC:             runtimeconfig.Failed(runtimeconfig.ReasonOIDCNotServed, "no CRD"),
			Administrators:   runtimeconfig.Done(runtimeconfig.ReasonAdministratorsConfigured, "ok")}
		got := byType(lc.Conditions(in, res))
		if c := got[lc.ConditionOidcAndConfigMapConfigured]; c.Status || c.Reason != string(runtimeconfig.ReasonOIDCNotServed) {
			t.Errorf("OidcAndConfigMapConfigured %+v", c)
		}
		if !got[lc.ConditionKymaSystemNSCreated].Status || !got[lc.ConditionConfigured].Status {
			t.Errorf("got %+v", got)
		}
		if _, ok := got[lc.ConditionBootstrapped]; ok {
			t.Error("Bootstrapped reported without bootstrap manifests")
		}
	})
	t.Run("changed and not attempted yet: the configuration conditions are left as they were", func(t *testing.T) {
		in := ready()
		in.Access.Configuration.DesiredHash = "c4"
		if got := byType(lc.Conditions(in, nil)); len(got) != 2 {
			t.Errorf("got %+v", got)
		}
	})
}
