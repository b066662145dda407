package shoot

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// noPrefix is the old OIDC flag value meaning "no prefix".
const noPrefix = "-"

// CustomerIssuer is a customer OIDC issuer of a runtime with the key that names it in errors: a Runtime field or
// the configuration key of the default customer issuer.
type CustomerIssuer struct {
	OIDC
	Field string
}

// CustomerIssuers are the Runtime's issuers: the legacy oidcConfig (when set) plus additionalOidcConfig; when the
// Runtime does not list additionalOidcConfig at all, the configured default customer issuer instead. An explicit
// empty list means no customer issuer. They are served inside the runtime as OpenIDConnect resources (through the
// shoot-oidc-service extension, see core/domain/runtimeconfig), in this order. Under the previous manager's rules
// (cfg.PreviousAuthentication) the legacy oidcConfig is no customer issuer: it is the API server's own or ignored,
// as it was there.
func CustomerIssuers(rt Runtime, cfg Config) []CustomerIssuer {
	var out []CustomerIssuer
	if rt.LegacyOIDC != nil && !cfg.PreviousAuthentication {
		out = append(out, CustomerIssuer{*rt.LegacyOIDC, legacyOIDCField})
	}
	if !rt.OIDCGiven {
		if cfg.DefaultOIDC != nil {
			out = append(out, CustomerIssuer{*cfg.DefaultOIDC, "shoot.oidc"})
		}
		return out
	}
	for i, c := range rt.OIDC {
		out = append(out, CustomerIssuer{c, fmt.Sprintf("spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[%d]", i)})
	}
	return out
}

func customerIssuers(in input) []CustomerIssuer { return CustomerIssuers(in.rt, in.cfg) }

// stepOIDC turns the operator's own issuers into JWT authenticators of a structured authentication configuration
// (Gardener v1.149 removed the shoot's oidcConfig) and checks the customer's issuers, which are not part of the shoot:
// they become OpenIDConnect resources inside the runtime, where an inline key set (jwks) and a CA bundle can be
// carried. The ConfigMap keeps the name an existing shoot references when that is ours or the previous
// infrastructure manager's, so it is adopted rather than replaced by a new one.
func stepOIDC(in input, s *Spec) error {
	for _, c := range customerIssuers(in) {
		if err := ValidateCustomerIssuer(c); err != nil {
			return err
		}
	}
	if in.cfg.PreviousAuthentication {
		return stepPreviousOIDC(in, s)
	}
	if len(in.cfg.OperatorOIDC) == 0 {
		return nil
	}
	auth := &Authentication{ConfigMapName: authenticationConfigMapName(in)}
	byIssuer := map[string]int{}
	for i, c := range in.cfg.OperatorOIDC {
		field := fmt.Sprintf("shoot.operatorOIDC[%d]", i)
		a, err := authenticator(c, field)
		if err != nil {
			return err
		}
		// The API server rejects two authenticators for one issuer; clients of the same issuer
		// with the same claim mapping become one authenticator with several audiences.
		if j, ok := byIssuer[a.Issuer]; ok {
			prev := &auth.JWT[j]
			if !sameMapping(*prev, a) {
				return invalid(ReasonInvalidOIDC, field+".issuerURL",
					"issuer %q appears twice with different claim mappings or CA bundles", a.Issuer)
			}
			for _, aud := range a.Audiences {
				if !slices.Contains(prev.Audiences, aud) {
					prev.Audiences = append(prev.Audiences, aud)
				}
			}
			continue
		}
		byIssuer[a.Issuer] = len(auth.JWT)
		auth.JWT = append(auth.JWT, a)
	}
	s.Authentication = auth
	return nil
}

// SigningAlgorithms are the token signing algorithms an OpenIDConnect resource accepts (the enum of its CRD,
// authentication.gardener.cloud/v1alpha1).
var SigningAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"}

// ValidateCustomerIssuer checks what the OpenIDConnect resource of a customer issuer needs: an https issuer URL, a
// client ID, PEM certificates as CA bundle, a JSON Web Key Set with keys as jwks and signing algorithms the
// resource accepts. A refused issuer names its field, so the Runtime fails with an actionable message instead of
// the runtime's API server rejecting the resource later.
func ValidateCustomerIssuer(c CustomerIssuer) error {
	if err := validateIssuer(c.OIDC, c.Field); err != nil {
		return err
	}
	if len(c.JWKS) > 0 && !validJWKS(c.JWKS) {
		return invalid(ReasonInvalidOIDC, c.Field+".jwks",
			"must be a JSON Web Key Set: a JSON object with a non-empty \"keys\" list of key objects")
	}
	for i, alg := range c.SigningAlgs {
		if !slices.Contains(SigningAlgorithms, alg) {
			return invalid(ReasonInvalidOIDC, fmt.Sprintf("%s.signingAlgs[%d]", c.Field, i), "%q is not one of %s",
				alg, strings.Join(SigningAlgorithms, ", "))
		}
	}
	return nil
}

// validJWKS reports whether b is a JSON object whose "keys" member is a non-empty list of objects (RFC 7517).
func validJWKS(b []byte) bool {
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil || len(set.Keys) == 0 {
		return false
	}
	for _, k := range set.Keys {
		if k == nil {
			return false
		}
	}
	return true
}

func validateIssuer(c OIDC, field string) error {
	u, err := url.Parse(c.IssuerURL)
	if c.IssuerURL == "" || err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return invalid(ReasonInvalidOIDC, field+".issuerURL",
			"%q must be an https URL without user, query or fragment", c.IssuerURL)
	}
	if c.ClientID == "" {
		return invalid(ReasonInvalidOIDC, field+".clientID", "the client ID must be set")
	}
	if c.CABundle != "" && !ValidPEMCertificates(c.CABundle) {
		return invalid(ReasonInvalidOIDC, field+".caBundle", "must be one or more PEM-encoded certificates")
	}
	return nil
}

func authenticator(c OIDC, field string) (Authenticator, error) {
	if err := validateIssuer(c, field); err != nil {
		return Authenticator{}, err
	}
	usernameClaim := c.UsernameClaim
	if usernameClaim == "" {
		usernameClaim = "sub"
	}
	// Old flag semantics: an unset prefix means "<issuer>#" except for the email claim; "-" means none.
	usernamePrefix := ""
	switch {
	case c.UsernamePrefix == nil && usernameClaim != "email":
		usernamePrefix = c.IssuerURL + "#"
	case c.UsernamePrefix != nil && *c.UsernamePrefix != noPrefix:
		usernamePrefix = *c.UsernamePrefix
	}
	groupsPrefix := ""
	if c.GroupsPrefix != nil && *c.GroupsPrefix != noPrefix {
		groupsPrefix = *c.GroupsPrefix
	}
	a := Authenticator{
		Issuer:         c.IssuerURL,
		Audiences:      []string{c.ClientID},
		UsernameClaim:  usernameClaim,
		UsernamePrefix: usernamePrefix,
		GroupsClaim:    c.GroupsClaim,
		SigningAlgs:    slices.Clone(c.SigningAlgs),

		CertificateAuthority: c.CABundle,
	}
	if c.GroupsClaim != "" {
		a.GroupsPrefix = groupsPrefix
	}
	if len(c.RequiredClaims) > 0 {
		a.RequiredClaims = maps.Clone(c.RequiredClaims)
	}
	return a, nil
}

func sameMapping(a, b Authenticator) bool {
	return a.UsernameClaim == b.UsernameClaim && a.UsernamePrefix == b.UsernamePrefix &&
		a.GroupsClaim == b.GroupsClaim && a.GroupsPrefix == b.GroupsPrefix &&
		maps.Equal(a.RequiredClaims, b.RequiredClaims) && a.CertificateAuthority == b.CertificateAuthority
}

// Names of the structured-authentication ConfigMap: ours and the one of the previous infrastructure manager.
const (
	AuthenticationConfigMapPrefix       = "structured-auth-"
	LegacyAuthenticationConfigMapPrefix = "structured-auth-config-"
)

func authenticationConfigMapName(in input) string {
	if in.current != nil {
		switch in.current.AuthenticationConfigMap {
		case AuthenticationConfigMapPrefix + in.rt.Name, LegacyAuthenticationConfigMapPrefix + in.rt.Name:
			return in.current.AuthenticationConfigMap
		}
	}
	return AuthenticationConfigMapPrefix + in.rt.Name
}

// ValidPEMCertificates reports whether b holds only PEM CERTIFICATE blocks, at least one, each a parsable
// certificate: the API server refuses to start with anything else.
func ValidPEMCertificates(b string) bool {
	rest := []byte(b)
	n := 0
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return false
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return false
		}
		n++
		rest = next
	}
	return n > 0 && len(bytes.TrimSpace(rest)) == 0
}

// NeedsControlPlaneCIDRs reports whether generating rt's cluster needs the control plane's egress CIDRs: the ACL
// feature is on, the provider runs the acl extension, and the Runtime restricts API server access. Only then must
// the caller read them (and re-generate when they change).
func NeedsControlPlaneCIDRs(rt Runtime, cfg Config) bool {
	providers := cfg.ACL.Providers
	if providers == nil {
		providers = DefaultACLProviders
	}
	return cfg.ACL.Enabled && len(rt.ACL) > 0 && slices.Contains(providers, rt.Provider)
}

// stepACL restricts API server access through the acl extension (shoot.acl): to the customer's CIDRs plus the
// operator's and KCP's egress CIDRs, so the control plane keeps its access. Only while the feature is on and only on
// providers where the extension runs; a Runtime asking for a restriction while the control plane CIDRs are unknown
// is refused, as applying it would lock the control plane out.
func stepACL(in input, s *Spec) error {
	acl := in.cfg.ACL
	if !NeedsControlPlaneCIDRs(in.rt, in.cfg) {
		return nil
	}
	var cidrs []string
	add := func(c string) {
		if !slices.Contains(cidrs, c) {
			cidrs = append(cidrs, c)
		}
	}
	for i, c := range in.rt.ACL {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return invalid(ReasonInvalidACL, fmt.Sprintf("spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs[%d]", i),
				"%q is not a CIDR", c)
		}
		add(p.Masked().String())
	}
	if acl.ControlPlaneCIDRsProblem != "" {
		return invalid(ReasonACLOperatorAddressesMissing, "spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs",
			"the operator's and KCP's egress addresses cannot be read (%s), so restricting API server access would "+
				"lock the control plane out", acl.ControlPlaneCIDRsProblem)
	}
	if len(acl.ControlPlaneCIDRs) == 0 {
		return invalid(ReasonACLOperatorAddressesMissing, "spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs",
			"the operator's and KCP's egress addresses are not known (shoot.acl.configMap is missing or empty), "+
				"so restricting API server access would lock the control plane out")
	}
	for _, c := range acl.ControlPlaneCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return invalid(ReasonInvalidConfig, "shoot.acl.configMap", "control plane address %q is not a CIDR", c)
		}
		add(p.Masked().String())
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionACL, Config: ACLConfig{AllowedCIDRs: cidrs}})
	return nil
}
