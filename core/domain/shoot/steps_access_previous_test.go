package shoot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPreviousAuthentication: under the previous manager's rules (Config.PreviousAuthentication, what its converter
// file maps to) the shoot trusts exactly what that manager gave it: one authenticator, the Runtime's legacy
// oidcConfig when it names an issuer and a client, else the operator issuer, its prefixes as written; the legacy
// issuer is then no customer issuer, and additionalOidcConfig stays the customer's (OpenIDConnect resources). Under
// this operator's rules the same configuration means what it always meant ("-": no prefix).
func TestPreviousAuthentication(t *testing.T) {
	// The converter file's defaultOperatorOidc as mapped: every key set (the previous manager required them), no
	// groupsPrefix (its file had none).
	operator := OIDC{IssuerURL: "https://kcp.example.com", ClientID: "kcp", UsernameClaim: "sub", UsernamePrefix: ptr("-"),
		GroupsClaim: "groups", SigningAlgs: []string{"RS256"}}
	// KEB's default customer issuer: in additionalOidcConfig since March 2025, in the legacy oidcConfig before.
	keb := OIDC{IssuerURL: "https://kyma.example.com", ClientID: "kyma", UsernameClaim: "sub", UsernamePrefix: ptr("-"),
		GroupsClaim: "groups", GroupsPrefix: ptr("-"), SigningAlgs: []string{"RS256"}}
	kebLegacy := keb
	kebLegacy.GroupsPrefix = nil // KEB wrote no groupsPrefix there
	opAuth := Authenticator{Issuer: "https://kcp.example.com", Audiences: []string{"kcp"}, UsernameClaim: "sub", UsernamePrefix: "-",
		GroupsClaim: "groups", SigningAlgs: []string{"RS256"}, Previous: true}
	const legacyField = "spec.shoot.kubernetes.kubeAPIServer.oidcConfig"
	for _, tc := range []struct {
		reason     string
		kim        bool // this operator's rules instead
		operators  []OIDC
		legacy     *OIDC
		additional []OIDC // nil: the Runtime has no additionalOidcConfig
		want       []Authenticator
		customers  []string // fields of the customer issuers
		err        Reason
		errField   string
	}{
		{reason: "KEB-shaped Runtime: the operator issuer, '-' a literal dash, groups unprefixed",
			operators: []OIDC{operator}, additional: []OIDC{keb}, want: []Authenticator{opAuth},
			customers: []string{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0]"}},
		{reason: "KEB before March 2025: the legacy issuer replaces the operator's and is no customer issuer",
			operators: []OIDC{operator}, legacy: &kebLegacy,
			want: []Authenticator{{Issuer: "https://kyma.example.com", Audiences: []string{"kyma"}, UsernameClaim: "sub", UsernamePrefix: "-",
				GroupsClaim: "groups", SigningAlgs: []string{"RS256"}, Previous: true}},
			customers: []string{"shoot.oidc"}},
		{reason: "a legacy issuer's groups prefix '-' is a literal dash too",
			operators: []OIDC{operator}, legacy: &keb, additional: []OIDC{keb},
			want: []Authenticator{{Issuer: "https://kyma.example.com", Audiences: []string{"kyma"}, UsernameClaim: "sub", UsernamePrefix: "-",
				GroupsClaim: "groups", GroupsPrefix: "-", SigningAlgs: []string{"RS256"}, Previous: true}},
			customers: []string{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0]"}},
		{reason: "a legacy oidcConfig without a client: the operator issuer, the legacy one ignored as there",
			operators: []OIDC{operator}, legacy: &OIDC{IssuerURL: "https://kyma.example.com"}, additional: []OIDC{},
			want: []Authenticator{opAuth}},
		{reason: "a CA bundle and required claims were not written by the previous manager",
			operators: []OIDC{operator}, legacy: &OIDC{IssuerURL: "https://kyma.example.com", ClientID: "kyma", UsernameClaim: "email",
				UsernamePrefix: ptr(""), GroupsClaim: "groups", CABundle: "ignored", RequiredClaims: map[string]string{"a": "b"}},
			additional: []OIDC{},
			want: []Authenticator{{Issuer: "https://kyma.example.com", Audiences: []string{"kyma"}, UsernameClaim: "email", GroupsClaim: "groups",
				Previous: true}}},
		{reason: "unset username claim and prefix, which the API server refuses as written there: the old flag rules",
			operators: []OIDC{{IssuerURL: "https://kcp.example.com", ClientID: "kcp"}}, additional: []OIDC{},
			want: []Authenticator{{Issuer: "https://kcp.example.com", Audiences: []string{"kcp"}, UsernameClaim: "sub",
				UsernamePrefix: "https://kcp.example.com#", Previous: true}}},
		{reason: "no operator issuer and no legacy one: no structured authentication", additional: []OIDC{}},
		{reason: "the previous rules trust one operator issuer", operators: []OIDC{operator, operator}, additional: []OIDC{},
			err: ReasonInvalidConfig, errField: "shoot.authenticationStyle"},
		{reason: "a legacy issuer without https is refused, naming its field", operators: []OIDC{operator},
			legacy: &OIDC{IssuerURL: "http://kyma.example.com", ClientID: "kyma"}, additional: []OIDC{},
			err: ReasonInvalidOIDC, errField: legacyField + ".issuerURL"},
		{reason: "this operator's rules: '-' is no prefix, the legacy issuer a customer issuer",
			kim: true, operators: []OIDC{operator}, legacy: &kebLegacy, additional: []OIDC{keb},
			want: []Authenticator{{Issuer: "https://kcp.example.com", Audiences: []string{"kcp"}, UsernameClaim: "sub", GroupsClaim: "groups",
				SigningAlgs: []string{"RS256"}}},
			customers: []string{legacyField, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0]"}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.LegacyOIDC = tc.legacy
			rt.OIDC, rt.OIDCGiven = tc.additional, tc.additional != nil
			cfg := testConfig()
			cfg.OperatorOIDC, cfg.DefaultOIDC, cfg.PreviousAuthentication = tc.operators, &keb, !tc.kim
			s, err := runStep(t, stepOIDC, input{rt: rt, cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if ve := AsValidationError(err); ve != nil && ve.Field != tc.errField {
				t.Errorf("error field %q, want %q", ve.Field, tc.errField)
			}
			if err != nil {
				return
			}
			var got []Authenticator
			if s.Authentication != nil {
				got = s.Authentication.JWT
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("authenticators (-want +got):\n%s", diff)
			}
			var fields []string
			for _, c := range CustomerIssuers(rt, cfg) {
				fields = append(fields, c.Field)
			}
			if diff := cmp.Diff(tc.customers, fields); diff != "" {
				t.Errorf("customer issuers (-want +got):\n%s", diff)
			}
		})
	}
}
