package shoot

import "slices"

// legacyOIDCField is the Runtime field of the legacy issuer.
const legacyOIDCField = "spec.shoot.kubernetes.kubeAPIServer.oidcConfig"

// stepPreviousOIDC builds the structured authentication configuration by the previous infrastructure manager's
// rules (Config.PreviousAuthentication), so that the ConfigMap it wrote for a shoot is the one written here, byte
// for byte: a single authenticator, the Runtime's legacy oidcConfig when it names an issuer and a client (that
// manager's "the Runtime's own issuer"), otherwise the operator issuer (its converter's defaultOperatorOidc).
// KEB sends the legacy oidcConfig empty, so a KEB-shaped Runtime gets the operator issuer.
func stepPreviousOIDC(in input, s *Spec) error {
	var (
		c     OIDC
		field string
	)
	switch ops := in.cfg.OperatorOIDC; {
	case in.rt.LegacyOIDC != nil && in.rt.LegacyOIDC.IssuerURL != "" && in.rt.LegacyOIDC.ClientID != "":
		c, field = *in.rt.LegacyOIDC, legacyOIDCField
	case len(ops) == 0:
		return nil
	case len(ops) == 1:
		c, field = ops[0], "shoot.operatorOIDC[0]"
	default:
		return invalid(ReasonInvalidConfig, "shoot.authenticationStyle",
			"the previous manager's rules trust one operator issuer, but shoot.operatorOIDC lists %d", len(ops))
	}
	a, err := previousAuthenticator(c, field)
	if err != nil {
		return err
	}
	s.Authentication = &Authentication{ConfigMapName: authenticationConfigMapName(in), JWT: []Authenticator{a}}
	return nil
}

// previousAuthenticator is the issuer as the previous manager wrote it: its client as the only audience, the claims
// and prefixes as given (a prefix "-" is a literal dash there, not "none"; an unset groups prefix is none), and no
// CA bundle or required claims, which it did not write. Where it wrote what the API server refuses (no username
// claim, an unset username prefix: no running cluster has that) the old flag rules apply instead.
func previousAuthenticator(c OIDC, field string) (Authenticator, error) {
	c.CABundle = "" // not written, so not checked
	if err := validateIssuer(c, field); err != nil {
		return Authenticator{}, err
	}
	usernameClaim := c.UsernameClaim
	if usernameClaim == "" {
		usernameClaim = "sub"
	}
	var usernamePrefix string
	switch {
	case c.UsernamePrefix != nil:
		usernamePrefix = *c.UsernamePrefix
	case usernameClaim != "email":
		usernamePrefix = c.IssuerURL + "#"
	}
	var groupsPrefix string
	if c.GroupsPrefix != nil {
		groupsPrefix = *c.GroupsPrefix
	}
	return Authenticator{
		Issuer:         c.IssuerURL,
		Audiences:      []string{c.ClientID},
		UsernameClaim:  usernameClaim,
		UsernamePrefix: usernamePrefix,
		GroupsClaim:    c.GroupsClaim,
		GroupsPrefix:   groupsPrefix,
		SigningAlgs:    slices.Clone(c.SigningAlgs),
		Previous:       true,
	}, nil
}
