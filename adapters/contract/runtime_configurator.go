package contract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// RuntimeInside acts inside the runtime a fixture's configurator configures, as people, Gardener and the runtime's
// own controllers do. Reads are live.
type RuntimeInside interface {
	Namespace(ctx context.Context, name string) (bool, error)
	ConfigMap(ctx context.Context, namespace, name string) (data, labels map[string]string, found bool, err error)
	DeleteConfigMap(ctx context.Context, namespace, name string) error
	// OIDC returns every OpenIDConnect resource of the runtime.
	OIDC(ctx context.Context) ([]runtimeconfig.ObservedOIDC, error)
	PutOIDC(ctx context.Context, o runtimeconfig.ObservedOIDC) error
	DeleteOIDC(ctx context.Context, name string) error
	// Bindings returns every ClusterRoleBinding of the runtime.
	Bindings(ctx context.Context) ([]runtimeconfig.ObservedBinding, error)
	PutBinding(ctx context.Context, b runtimeconfig.ObservedBinding) error
	DeleteBinding(ctx context.Context, name string) error
	// BootstrapObject reports whether an object of kind exists; PullSecret whether a Secret exists.
	BootstrapObject(ctx context.Context, kind, namespace, name string) (bool, error)
	PullSecret(ctx context.Context, namespace, name string) (bool, error)
	// ReplaceBootstrapObject plays someone else deleting an object (a ConfigMap is enough) and creating one of the
	// same name without the operator's labels.
	ReplaceBootstrapObject(ctx context.Context, kind, namespace, name string) error
	// SetDeploymentAvailable plays the runtime's controllers making a Deployment available.
	SetDeploymentAvailable(ctx context.Context, namespace, name string) error
	// Hang makes the runtime's API server stop answering until resume is called.
	Hang(ctx context.Context) (resume func(), err error)
}

// RuntimeConfiguratorFixture is one ports.RuntimeConfigurator with a fresh runtime it configures.
type RuntimeConfiguratorFixture struct {
	Configurator ports.RuntimeConfigurator
	RuntimeID    string
	Inside       RuntimeInside
	// Timeout is the configurator's bound on one call.
	Timeout time.Duration
	// Unreachable is a runtime ID the configurator has no usable kubeconfig for (its Secret does not exist).
	Unreachable string
}

// FixtureOptions shape the runtime of a fixture.
type FixtureOptions struct {
	// ServeOIDC: the runtime serves OpenIDConnect resources (shoot-oidc-service installed its CRD).
	ServeOIDC bool
}

// JWKS is the key set the contract's first issuer carries.
var JWKS = []byte(`{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`)

// contractFacts is a KEB-shaped runtime: two pools, two customer issuers (jwks, CA bundle), two administrators.
func contractFacts(runtimeID string) runtimeconfig.Facts {
	prefix := "-"
	rt := shoot.Runtime{ID: runtimeID, Name: "c-contract", Region: "eu-central-1", Provider: shoot.AWS, GlobalAccountID: "ga",
		Workers: []shoot.Worker{{Name: "cpu-worker-0", MachineType: "m6i.large", Minimum: 1, Maximum: 3, Zones: []string{"a"}},
			{Name: "extra", MachineType: "m6i.xlarge", Minimum: 0, Maximum: 2, Zones: []string{"a"}}},
		Networking: shoot.Networking{Nodes: "10.250.0.0/16", Pods: "100.64.0.0/12", Services: "100.104.0.0/13"},
		OIDCGiven:  true,
		OIDC: []shoot.OIDC{
			{IssuerURL: "https://offline.example.com", ClientID: "app", UsernameClaim: "email", UsernamePrefix: &prefix,
				SigningAlgs: []string{"ES256"}, JWKS: JWKS, RequiredClaims: map[string]string{"tenant": "t1"}},
			{IssuerURL: "https://private.example.com", ClientID: "app2", GroupsClaim: "groups", CABundle: CABundle},
		},
		Administrators: []string{"alice@example.com", "bob@example.com"}}
	return runtimeconfig.Facts{Runtime: rt, OIDCServed: true}
}

// CABundle is the CA bundle the contract's second issuer carries.
const CABundle = `-----BEGIN CERTIFICATE-----
MIIBnzCCAUWgAwIBAgIUcMf4Ks5hmwZPAsVUYiD9odolq2IwCgYIKoZIzj0EAwIw
JDEiMCAGA1UEAwwZbG9naW4uYWNtZS5leGFtcGxlLmNvbSBDQTAgFw0yNjExMzAy
MjIwMzlaGA8yMTI2MTEwNjIyMjAzOVowJDEiMCAGA1UEAwwZbG9naW4uYWNtZS5l
eGFtcGxlLmNvbSBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABIHFtRaHP9Dw
83aCuZCPfBv/va8D0X0dBl7R9INfjyi1ru5zYCPE2snyoOFAltyB6s8axtM5cg0X
/6G9emeDUgqjUzBRMB0GA1UdDgQWBBRcEDM4SjmScXoID4IvZDzcW89T9jAfBgNV
HSMEGDAWgBRcEDM4SjmScXoID4IvZDzcW89T9jAPBgNVHRMBAf8EBTADAQH/MAoG
CCqGSM49BAMCA0gAMEUCIQDSgyMjFR4yXNms3k6GJrKIZmKb73FJw0KP1Z0kjZEc
+wIgD8hqWjll96Tf5ygrmrQPm6v028IS/1kNJ7/IYJdrbCE=
-----END CERTIFICATE-----
`

func compute(t *testing.T, f runtimeconfig.Facts) runtimeconfig.Desired {
	t.Helper()
	d, err := runtimeconfig.Compute(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// RunRuntimeConfiguratorContract runs the contract against fixtures made by newFixture (one per subtest).
func RunRuntimeConfiguratorContract(t *testing.T, newFixture func(t *testing.T, o FixtureOptions) RuntimeConfiguratorFixture) {
	t.Run("a fresh runtime gets everything; a second call finds it in place", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		d := compute(t, contractFacts(f.RuntimeID))
		mustConfigure(t, f, d)
		checkInside(t, f, d)
		mustConfigure(t, f, d)
		checkInside(t, f, d)
	})
	t.Run("a removed issuer and administrator go, the ConfigMap follows, others' objects stay", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		facts := contractFacts(f.RuntimeID)
		mustConfigure(t, f, compute(t, facts))
		ctx := t.Context()
		must(t, f.Inside.PutOIDC(ctx, runtimeconfig.ObservedOIDC{OIDCResource: runtimeconfig.OIDCResource{Name: "customers-own",
			IssuerURL: "https://own.example.com", ClientID: "own", UsernameClaim: "sub"}}))
		must(t, f.Inside.PutBinding(ctx, adminBinding("by-hand", false, "carol@example.com")))
		facts.Runtime.OIDC = facts.Runtime.OIDC[1:]
		facts.Runtime.Administrators = facts.Runtime.Administrators[1:]
		facts.Runtime.Workers = facts.Runtime.Workers[:1]
		d := compute(t, facts)
		mustConfigure(t, f, d)
		checkInside(t, f, d)
		if !hasOIDC(t, f, "customers-own") || !hasBinding(t, f, "by-hand") {
			t.Error("objects without the operator's label were removed")
		}
	})
	t.Run("bindings of earlier names are adopted, bindings under our names corrected", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		ctx := t.Context()
		d := compute(t, contractFacts(f.RuntimeID))
		alice, bob := d.Administrators[0], d.Administrators[1]
		must(t, f.Inside.PutBinding(ctx, adminBinding("kim-admin-0011223344556677", true, alice.User)))
		must(t, f.Inside.PutBinding(ctx, adminBinding("admin-k2x9q", true, bob.User)))
		must(t, f.Inside.PutBinding(ctx, adminBinding(bob.Name, false, "mallory@example.com")))
		viewer := adminBinding(alice.Name, true, alice.User)
		viewer.RoleName = "view"
		must(t, f.Inside.PutBinding(ctx, viewer))
		sa := runtimeconfig.ObservedBinding{Name: "sa-admin", Managed: true, RoleKind: "ClusterRole", RoleName: runtimeconfig.ClusterAdminRole,
			Subjects: []runtimeconfig.Subject{{Kind: "ServiceAccount", Name: "robot", Namespace: "default"}}}
		must(t, f.Inside.PutBinding(ctx, sa))
		mustConfigure(t, f, d)
		checkInside(t, f, d)
		for _, gone := range []string{"kim-admin-0011223344556677", "admin-k2x9q"} {
			if hasBinding(t, f, gone) {
				t.Errorf("binding %s of an earlier name survived", gone)
			}
		}
		if !hasBinding(t, f, "sa-admin") {
			t.Error("a labelled binding of another shape (a service account) was removed")
		}
	})
	t.Run("objects deleted by hand come back on the next call", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		ctx := t.Context()
		d := compute(t, contractFacts(f.RuntimeID))
		mustConfigure(t, f, d)
		must(t, f.Inside.DeleteConfigMap(ctx, runtimeconfig.Namespace, runtimeconfig.ProvisioningInfoName))
		must(t, f.Inside.DeleteOIDC(ctx, d.OIDC[0].Name))
		must(t, f.Inside.DeleteBinding(ctx, d.Administrators[0].Name))
		mustConfigure(t, f, d)
		checkInside(t, f, d)
	})
	t.Run("without shoot-oidc-service no OpenIDConnect resource is written or removed", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{})
		facts := contractFacts(f.RuntimeID)
		facts.OIDCServed = false
		d := compute(t, facts)
		mustConfigure(t, f, d)
		checkInside(t, f, d)
	})
	t.Run("a runtime that does not serve OpenIDConnect yet: the rest is done, OIDC reports it", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{})
		d := compute(t, contractFacts(f.RuntimeID))
		res, err := f.Configurator.Configure(t.Context(), d)
		if err != nil {
			t.Fatal(err)
		}
		if res.OIDC.Done || res.OIDC.Reason != runtimeconfig.ReasonOIDCNotServed {
			t.Errorf("OIDC outcome %+v, want %s", res.OIDC, runtimeconfig.ReasonOIDCNotServed)
		}
		if !res.Namespace.Done || !res.ProvisioningInfo.Done || !res.Administrators.Done {
			t.Errorf("the other parts must not wait for OIDC: %+v", res)
		}
		if p := res.Problem(); p == nil || p.Reason != runtimeconfig.ReasonOIDCNotServed {
			t.Errorf("problem %+v", p)
		}
	})
	t.Run("a runtime without a usable kubeconfig is unreachable, and nothing is written", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		d := compute(t, contractFacts(f.Unreachable))
		res, err := f.Configurator.Configure(t.Context(), d)
		if !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("error %v, want ErrRuntimeUnreachable", err)
		}
		if p := res.Problem(); p == nil || p.Reason != runtimeconfig.ReasonRuntimeAPIServerUnreachable {
			t.Errorf("problem %+v, want %s", p, runtimeconfig.ReasonRuntimeAPIServerUnreachable)
		}
		if res.Namespace.Done || res.ProvisioningInfo.Done || res.OIDC.Done || res.Administrators.Done {
			t.Errorf("parts reported done without a runtime: %+v", res)
		}
	})
	t.Run("a runtime API server that does not answer: the call returns within the timeout", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		d := compute(t, contractFacts(f.RuntimeID))
		mustConfigure(t, f, d) // a client exists and has connections: they must not hang either
		resume, err := f.Inside.Hang(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer resume()
		d.ProvisioningInfo += "# changed\n"
		begin := time.Now()
		res, err := f.Configurator.Configure(t.Context(), d)
		took := time.Since(begin)
		if !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("error %v, want ErrRuntimeUnreachable", err)
		}
		if took > f.Timeout+5*time.Second {
			t.Errorf("the call took %s, the timeout is %s", took, f.Timeout)
		}
		if p := res.Problem(); p == nil || p.Reason != runtimeconfig.ReasonRuntimeAPIServerUnreachable {
			t.Errorf("problem %+v, want %s", p, runtimeconfig.ReasonRuntimeAPIServerUnreachable)
		}
		resume()
		mustConfigure(t, f, d)
		checkInside(t, f, d)
	})
	runBootstrapContract(t, newFixture)
}

func adminBinding(name string, managed bool, user string) runtimeconfig.ObservedBinding {
	return runtimeconfig.ObservedBinding{Name: name, Managed: managed, RoleKind: "ClusterRole", RoleName: runtimeconfig.ClusterAdminRole,
		Subjects: []runtimeconfig.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustConfigure(t *testing.T, f RuntimeConfiguratorFixture, d runtimeconfig.Desired) runtimeconfig.Result {
	t.Helper()
	res, err := f.Configurator.Configure(t.Context(), d)
	if err != nil {
		t.Fatalf("configure: %v", err)
	}
	if p := res.Problem(); p != nil {
		t.Fatalf("configure: %s: %s", p.Reason, p.Message)
	}
	return res
}
