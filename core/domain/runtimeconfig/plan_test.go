package runtimeconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanBindings(t *testing.T) {
	alice, bob := AdminBindingName("alice"), AdminBindingName("bob")
	desired := []AdminBinding{{Name: alice, User: "alice"}, {Name: bob, User: "bob"}}
	admin := func(name string, managed bool, users ...string) ObservedBinding {
		b := ObservedBinding{Name: name, Managed: managed, RoleKind: "ClusterRole", RoleName: ClusterAdminRole}
		for _, u := range users {
			b.Subjects = append(b.Subjects, userSubject(u))
		}
		return b
	}
	cases := []struct {
		reason   string
		observed []ObservedBinding
		want     BindingPlan
	}{
		{"nothing there: both created", nil, BindingPlan{Apply: desired}},
		{"in place: nothing to do", []ObservedBinding{admin(alice, true, "alice"), admin(bob, true, "bob")}, BindingPlan{}},
		{"the old kim-admin-* and the previous system's admin-xxxxx names are adopted: new names first, then the old go",
			[]ObservedBinding{admin("kim-admin-0011223344556677", true, "alice"), admin("admin-k2x9q", true, "bob"), admin(alice, true, "alice")},
			BindingPlan{Apply: desired[1:], Delete: []string{"admin-k2x9q", "kim-admin-0011223344556677"}}},
		{"a removed administrator's binding goes", []ObservedBinding{admin(alice, true, "alice"), admin(bob, true, "bob"), admin(AdminBindingName("carol"), true, "carol")},
			BindingPlan{Delete: []string{AdminBindingName("carol")}}},
		{"other subjects under our name are corrected, not trusted", []ObservedBinding{admin(alice, true, "mallory"), admin(bob, true, "bob", "mallory")},
			BindingPlan{Apply: desired}},
		{"an unlabelled binding under our name is taken over", []ObservedBinding{admin(alice, false, "alice"), admin(bob, true, "bob")},
			BindingPlan{Apply: desired[:1]}},
		{"another role under our name: deleted and created again (the role cannot change)",
			[]ObservedBinding{{Name: alice, Managed: true, RoleKind: "ClusterRole", RoleName: "view", Subjects: []Subject{userSubject("alice")}}, admin(bob, true, "bob")},
			BindingPlan{Recreate: desired[:1]}},
		{"labelled bindings of another shape are never deleted", []ObservedBinding{admin(alice, true, "alice"), admin(bob, true, "bob"),
			{Name: "sa-admin", Managed: true, RoleKind: "ClusterRole", RoleName: ClusterAdminRole, Subjects: []Subject{{Kind: "ServiceAccount", Name: "x", Namespace: "y"}}},
			{Name: "viewers", Managed: true, RoleKind: "ClusterRole", RoleName: "view", Subjects: []Subject{userSubject("carol")}}},
			BindingPlan{}},
		{"unlabelled bindings are never deleted", []ObservedBinding{admin(alice, true, "alice"), admin(bob, true, "bob"), admin("by-hand", false, "carol")},
			BindingPlan{}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlanBindings(tc.observed, desired)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOIDC(t *testing.T) {
	a := OIDCResource{Name: "kyma-oidc-0", IssuerURL: "https://a.example.com", ClientID: "a", UsernameClaim: "sub"}
	b := OIDCResource{Name: "kyma-oidc-1", IssuerURL: "https://b.example.com", ClientID: "b", UsernameClaim: "sub", JWKS: []byte(`{"keys":[{}]}`)}
	observed := func(r OIDCResource, managed bool) ObservedOIDC {
		return ObservedOIDC{OIDCResource: r, Managed: managed}
	}
	defaulted := a
	defaulted.SupportedSigningAlgs = []string{"RS256"}
	changed := b
	changed.JWKS = []byte(`{"keys":[{"kid":"2"}]}`)
	cases := []struct {
		reason   string
		observed []ObservedOIDC
		desired  []OIDCResource
		want     OIDCPlan
	}{
		{"nothing there: both created", nil, []OIDCResource{a, b}, OIDCPlan{Apply: []OIDCResource{a, b}}},
		{"in place (the CRD's default algorithm counts as unset): nothing", []ObservedOIDC{observed(defaulted, true), observed(b, true)}, []OIDCResource{a, b}, OIDCPlan{}},
		{"a changed key set is written again", []ObservedOIDC{observed(a, true), observed(changed, true)}, []OIDCResource{a, b}, OIDCPlan{Apply: []OIDCResource{b}}},
		{"a removed issuer's resource goes, after the others are written", []ObservedOIDC{observed(a, true), observed(b, true)}, []OIDCResource{a},
			OIDCPlan{Delete: []string{"kyma-oidc-1"}}},
		{"the first issuer removed: kyma-oidc-0 takes the second one's place before kyma-oidc-1 goes", []ObservedOIDC{observed(a, true), observed(b, true)},
			[]OIDCResource{{Name: "kyma-oidc-0", IssuerURL: b.IssuerURL, ClientID: b.ClientID, UsernameClaim: "sub", JWKS: b.JWKS}},
			OIDCPlan{Apply: []OIDCResource{{Name: "kyma-oidc-0", IssuerURL: b.IssuerURL, ClientID: b.ClientID, UsernameClaim: "sub", JWKS: b.JWKS}}, Delete: []string{"kyma-oidc-1"}}},
		{"the customer's own resources are never touched", []ObservedOIDC{observed(OIDCResource{Name: "mine", IssuerURL: "https://m.example.com"}, false)}, nil, OIDCPlan{}},
		{"an unlabelled resource under our name is taken over", []ObservedOIDC{observed(a, false)}, []OIDCResource{a}, OIDCPlan{Apply: []OIDCResource{a}}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlanOIDC(tc.observed, tc.desired)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultProblem(t *testing.T) {
	ok := Result{Namespace: Done(ReasonKymaSystemNSReady, ""), ProvisioningInfo: Done(ReasonOidcAndConfigMapsConfigured, ""),
		OIDC: Done(ReasonOidcAndConfigMapsConfigured, ""), Administrators: Done(ReasonAdministratorsConfigured, "")}
	if p := ok.Problem(); p != nil {
		t.Errorf("complete result has problem %+v", p)
	}
	invalid := ok
	invalid.Bootstrap = Failed(ReasonBootstrapManifestsInvalid, "not YAML")
	if p := invalid.Problem(); p != nil {
		t.Errorf("invalid bootstrap manifests must hold nothing up, got %+v", p)
	}
	progressing := ok
	progressing.Bootstrap = Failed(ReasonBootstrapInProgress, "waiting")
	if p := progressing.Problem(); p == nil || p.Reason != ReasonBootstrapInProgress {
		t.Errorf("progressing bootstrap: %+v", p)
	}
	oidc := ok
	oidc.OIDC = Failed(ReasonOIDCNotServed, "no CRD")
	oidc.Administrators = Failed(ReasonConfigurationError, "x")
	if p := oidc.Problem(); p == nil || p.Reason != ReasonOIDCNotServed {
		t.Errorf("first problem: %+v", p)
	}
}
