package usecase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// configWorld provisions one Runtime with two customer issuers on the fakes and passes the recorded configuration
// from pass to pass, as the controller does through the Runtime's status.
type configWorld struct {
	t       *testing.T
	clock   *fake.Clock
	garden  *fake.Garden
	access  *fake.AccessObjects
	runtime *fake.RuntimeConfigurator
	p       *usecase.Provisioner
	req     usecase.RuntimeRequest
	last    usecase.ProvisionResult
}

const driftPeriod = 10 * time.Minute

func newConfigWorld(t *testing.T) *configWorld {
	clock := fake.NewClock(reapStart)
	w := &configWorld{t: t, clock: clock, garden: fake.NewGarden(clock), access: fake.NewAccessObjects(), runtime: fake.NewRuntimeConfigurator()}
	w.p = &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: w.access, Configurator: w.runtime,
		Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy(), DriftPeriod: driftPeriod}
	rt := (&kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}).spec()
	rt.OIDCGiven = true
	rt.OIDC = []shoot.OIDC{{IssuerURL: "https://a.example.com", ClientID: "a", JWKS: []byte(`{"keys":[{"kty":"EC"}]}`)},
		{IssuerURL: "https://b.example.com", ClientID: "b"}}
	rt.Administrators = []string{"alice@example.com"}
	w.req = usecase.RuntimeRequest{Runtime: rt, Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{},
		InstanceID: "inst-1", InstanceName: "kyma-1"}
	return w
}

func (w *configWorld) pass() lifecycle.Decision {
	w.t.Helper()
	res, err := w.p.Provision(context.Background(), w.req, w.clock.Now())
	if err != nil {
		w.t.Fatal(err)
	}
	w.req.Configured, w.last = res.Configured, res
	return res.Decision
}

// toReady creates the shoot, lets Gardener advertise the API server (configuration meanwhile) and succeed.
func (w *configWorld) toReady() {
	w.t.Helper()
	w.pass()
	w.garden.Progress("c-1")
	w.garden.Schedule("c-1", "aws-eu1", "eu-west-1")
	w.access.SetKubeconfig(modelNamespace, "rt-1")
	if d := w.pass(); d.Reason != lifecycle.ReasonWaitingForGardener || w.last.Configuration == nil {
		w.t.Fatalf("while Gardener creates: %s %s, configured %v; want the runtime configured meanwhile", d.State, d.Reason, w.last.Configuration)
	}
	w.garden.Succeed("c-1")
	// Everything but Gardener's reconcile time was reached meanwhile: Ready without a request into the runtime
	// (nothing on the path from Succeeded to Ready). The reconcile time alone makes no pass due: the drift pass
	// writes it.
	writes := w.runtime.Writes
	if d := w.pass(); d.State != lifecycle.StateReady || d.RequeueAfter < driftPeriod/2 || w.last.Configuration != nil || w.runtime.Writes != writes {
		w.t.Fatalf("after Gardener succeeded: %s %s (%s), requeue %s, configured %v; want Ready at once, looked at again by the drift period",
			d.State, d.Reason, d.Message, d.RequeueAfter, w.last.Configuration != nil)
	}
	if strings.Contains(w.details(), "lastReconcileTime:") {
		w.t.Fatalf("the reconcile time is written before Gardener reported one:\n%s", w.details())
	}
}

func (w *configWorld) details() string {
	data, _, _ := w.runtime.ConfigMap("rt-1", runtimeconfig.Namespace, runtimeconfig.ProvisioningInfoName)
	return data[runtimeconfig.ProvisioningInfoKey]
}

func TestRuntimeConfigurationThroughProvisioning(t *testing.T) {
	w := newConfigWorld(t)
	w.pass()
	w.garden.SetInfrastructureConfig("c-1", []byte(`{"kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"}}}`))
	w.toReady()
	doc := w.details()
	for _, want := range []string{"seedRegion: eu-west-1", "environmentInstanceID: inst-1", "runtimeID: rt-1",
		// The previous infrastructure manager's keys.
		"instanceID: inst-1", "infrastructureConfig:\n  kind: InfrastructureConfig\n  networks:\n    vpc:\n      cidr: 10.250.0.0/16\n"} {
		if !strings.Contains(doc, want) {
			t.Errorf("provisioning info lacks %q:\n%s", want, doc)
		}
	}
	if got := w.runtime.OIDC("rt-1"); len(got) != 2 || got[0].Name != "kyma-oidc-0" || string(got[0].JWKS) != `{"keys":[{"kty":"EC"}]}` {
		t.Errorf("OpenIDConnect resources %+v", got)
	}
	if got := w.runtime.Admins("rt-1"); len(got) != 1 || got[0] != "alice@example.com" {
		t.Errorf("admins %v", got)
	}
	if w.req.Configured.Hash == "" || !w.req.Configured.AppliedAt.Equal(w.clock.Now()) {
		t.Errorf("recorded %+v", w.req.Configured)
	}

	t.Run("unchanged: nothing is written again inside the drift period", func(t *testing.T) {
		writes := w.runtime.Writes
		w.clock.Step(driftPeriod / 2)
		if d := w.pass(); d.State != lifecycle.StateReady || w.last.Configuration != nil || w.runtime.Writes != writes {
			t.Errorf("%s, configured again %v, writes %d -> %d", d.State, w.last.Configuration != nil, writes, w.runtime.Writes)
		}
		if d := w.pass(); d.RequeueAfter <= 0 || d.RequeueAfter > driftPeriod {
			t.Errorf("Ready must ask to be looked at again within the drift period, got %s", d.RequeueAfter)
		}
	})
	t.Run("a ConfigMap deleted by hand is back after the drift period, with Gardener's reconcile time", func(t *testing.T) {
		w.runtime.DeleteConfigMap("rt-1", runtimeconfig.Namespace, runtimeconfig.ProvisioningInfoName)
		w.clock.Step(driftPeriod + driftPeriod/10)
		want := doc + "lastReconcileTime: \"" + reapStart.UTC().Format(time.RFC3339) + "\"\n"
		if d := w.pass(); d.State != lifecycle.StateReady || w.details() != want {
			t.Errorf("%s %s; document %q, want %q", d.State, d.Reason, w.details(), want)
		}
	})
	t.Run("a removed issuer's resource and a changed pool follow at once", func(t *testing.T) {
		w.req.Runtime.OIDC = w.req.Runtime.OIDC[1:]
		w.req.Runtime.Generation++
		w.req.Runtime.Workers[0].Maximum = 9
		w.pass() // the shoot spec changed: applied, Gardener works on it; the runtime is configured meanwhile
		if got := w.runtime.OIDC("rt-1"); len(got) != 1 || got[0].IssuerURL != "https://b.example.com" {
			t.Errorf("OpenIDConnect resources %+v", got)
		}
		if !strings.Contains(w.details(), "autoScalerMax: 9") {
			t.Errorf("provisioning info not updated:\n%s", w.details())
		}
		w.garden.Succeed("c-1")
		if d := w.pass(); d.State != lifecycle.StateReady {
			t.Errorf("%s %s", d.State, d.Reason)
		}
	})
	t.Run("an API server that does not answer: a stable reason, retried", func(t *testing.T) {
		w.runtime.SetUnreachable("rt-1", true)
		w.req.Runtime.Administrators = append(w.req.Runtime.Administrators, "bob@example.com")
		d := w.pass()
		if d.State != lifecycle.StatePending || d.Reason != lifecycle.ReasonRuntimeAPIServerUnreachable || !d.Transient {
			t.Errorf("%s %s transient=%v", d.State, d.Reason, d.Transient)
		}
		var byType = map[string]lifecycle.Condition{}
		for _, c := range lifecycle.Conditions(w.last.Input, w.last.Configuration) {
			byType[c.Type] = c
		}
		if c := byType[lifecycle.ConditionConfigured]; c.Status || c.Reason != string(runtimeconfig.ReasonRuntimeAPIServerUnreachable) {
			t.Errorf("Configured condition %+v", c)
		}
		w.runtime.SetUnreachable("rt-1", false)
		if d := w.pass(); d.State != lifecycle.StateReady || len(w.runtime.Admins("rt-1")) != 2 {
			t.Errorf("after the API server answers again: %s %s, admins %v", d.State, d.Reason, w.runtime.Admins("rt-1"))
		}
	})
}

// TestGardenerSuccessesAloneConfigureNothing: Gardener's operations on an unchanged shoot (the daily maintenance
// reconcile, several a day on busy landscapes) change only the provisioning info's lastReconcileTime, which
// nothing reads fresh (docs/runtime-configuration.md): they send no request into the runtime and write nothing; the
// drift pass writes the latest time with the rest. Each such success cost a configuration pass before.
func TestGardenerSuccessesAloneConfigureNothing(t *testing.T) {
	w := newConfigWorld(t)
	w.toReady()
	writes, passes := w.runtime.Writes, 0
	var lastSuccess time.Time
	for range 3 {
		w.clock.Step(time.Minute)
		w.garden.ProgressTo("c-1", 10) // a maintenance reconcile starts
		w.pass()
		passes += configured(w)
		w.clock.Step(time.Minute)
		w.garden.Succeed("c-1")
		lastSuccess = w.clock.Now()
		if d := w.pass(); d.State != lifecycle.StateReady {
			t.Fatalf("after Gardener's success: %s %s", d.State, d.Reason)
		}
		passes += configured(w)
	}
	if passes != 0 || w.runtime.Writes != writes {
		t.Errorf("3 Gardener operations on an unchanged shoot: %d configuration passes, %d writes into the runtime; want none",
			passes, w.runtime.Writes-writes)
	}
	w.clock.Step(driftPeriod + driftPeriod/10)
	w.pass()
	if want := "lastReconcileTime: \"" + lastSuccess.UTC().Format(time.RFC3339) + "\""; configured(w) != 1 || !strings.Contains(w.details(), want) {
		t.Errorf("the drift pass: configured %d times, document\n%s\nwant %s", configured(w), w.details(), want)
	}
}

// configured is 1 when the last pass configured the runtime.
func configured(w *configWorld) int {
	if w.last.Configuration != nil {
		return 1
	}
	return 0
}

func TestBootstrapThroughProvisioning(t *testing.T) {
	w := newConfigWorld(t)
	source := &fakeBootstrap{set: &runtimeconfig.Bootstrap{Objects: []runtimeconfig.BootstrapObject{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "agent", JSON: []byte(`{}`)}}}}
	w.p.Bootstrap = source
	w.pass()
	w.garden.Progress("c-1")
	w.access.SetKubeconfig(modelNamespace, "rt-1")
	w.pass()
	w.garden.Succeed("c-1")
	d := w.pass()
	if d.State != lifecycle.StatePending || d.Reason != lifecycle.ReasonBootstrapInProgress || d.Transient || d.RequeueAfter != usecase.BootstrapRecheck {
		t.Fatalf("Deployments not available: %s %s transient=%v requeue %s", d.State, d.Reason, d.Transient, d.RequeueAfter)
	}
	w.runtime.SetDeploymentAvailable("rt-1", runtimeconfig.Namespace, "agent")
	if d := w.pass(); d.State != lifecycle.StateReady {
		t.Fatalf("Deployments available: %s %s", d.State, d.Reason)
	}
	t.Run("manifests that cannot be used are reported and hold nothing up", func(t *testing.T) {
		source.set = &runtimeconfig.Bootstrap{Problem: "document 1 is not YAML"}
		if d := w.pass(); d.State != lifecycle.StateReady || w.last.Configuration == nil ||
			w.last.Configuration.Bootstrap.Reason != runtimeconfig.ReasonBootstrapManifestsInvalid {
			t.Errorf("%s %s, result %+v", d.State, d.Reason, w.last.Configuration)
		}
	})
	t.Run("a refused set is reported by a warning event, applies nothing and holds nothing up", func(t *testing.T) {
		source.set = &runtimeconfig.Bootstrap{Source: "kcp-system/kim-bootstrap", Objects: []runtimeconfig.BootstrapObject{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "refused-with-its-set", JSON: []byte(`{}`)},
			{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: "everyone-admin", JSON: []byte(`{}`)}}}
		d := w.pass()
		if d.State != lifecycle.StateReady || w.last.Configuration == nil ||
			w.last.Configuration.Bootstrap.Reason != runtimeconfig.ReasonBootstrapObjectRefused {
			t.Fatalf("%s %s, result %+v", d.State, d.Reason, w.last.Configuration)
		}
		if w.runtime.BootstrapObject("rt-1", "ConfigMap", runtimeconfig.Namespace, "refused-with-its-set") {
			t.Error("an object of a refused set was applied")
		}
		var warned bool
		for _, e := range w.last.Events {
			warned = warned || e.Warning && e.Reason == usecase.EventBootstrapObjectRefused && strings.Contains(e.Message, "everyone-admin")
		}
		if !warned {
			t.Errorf("no warning event %s naming the object: %+v", usecase.EventBootstrapObjectRefused, w.last.Events)
		}
	})
	t.Run("a source that cannot be read fails the pass, not the runtime", func(t *testing.T) {
		source.err = ports.ErrTransient
		if _, err := w.p.Provision(context.Background(), w.req, w.clock.Now()); !errors.Is(err, ports.ErrTransient) {
			t.Errorf("error %v", err)
		}
	})
}

type fakeBootstrap struct {
	set *runtimeconfig.Bootstrap
	err error
}

func (f *fakeBootstrap) Load(context.Context) (*runtimeconfig.Bootstrap, error) { return f.set, f.err }
