package shoot

import (
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
)

// noPrefix is the old OIDC flag value meaning "no prefix".
const noPrefix = "-"

// stepOIDC turns the Runtime's OIDC issuers (or the configured default) into JWT authenticators
// of a structured authentication configuration: Gardener v1.149 removed the shoot's oidcConfig.
func stepOIDC(in input, s *Spec) error {
	configs := in.rt.OIDC
	field := "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig"
	if len(configs) == 0 && in.cfg.DefaultOIDC != nil {
		configs, field = []OIDC{*in.cfg.DefaultOIDC}, "shoot.oidc"
	}
	if len(configs) == 0 {
		return nil
	}
	auth := &Authentication{ConfigMapName: structuredAuthConfigMapName + in.rt.Name}
	byIssuer := map[string]int{}
	for i, c := range configs {
		a, err := authenticator(c, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return err
		}
		// The API server rejects two authenticators for one issuer; clients of the same issuer
		// with the same claim mapping become one authenticator with several audiences.
		if j, ok := byIssuer[a.Issuer]; ok {
			prev := &auth.JWT[j]
			if !sameMapping(*prev, a) {
				return invalid(ReasonInvalidOIDC, fmt.Sprintf("%s[%d].issuerURL", field, i),
					"issuer %q appears twice with different claim mappings", a.Issuer)
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

func authenticator(c OIDC, field string) (Authenticator, error) {
	u, err := url.Parse(c.IssuerURL)
	if c.IssuerURL == "" || err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return Authenticator{}, invalid(ReasonInvalidOIDC, field+".issuerURL",
			"%q must be an https URL without user, query or fragment", c.IssuerURL)
	}
	if c.ClientID == "" {
		return Authenticator{}, invalid(ReasonInvalidOIDC, field+".clientID", "the client ID must be set")
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
		JWKS:           slices.Clone(c.JWKS),
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
		maps.Equal(a.RequiredClaims, b.RequiredClaims)
}

// stepACL restricts API server access to the allowed CIDRs through the acl extension.
func stepACL(in input, s *Spec) error {
	if len(in.rt.ACL) == 0 {
		return nil
	}
	cidrs := make([]string, 0, len(in.rt.ACL))
	for i, c := range in.rt.ACL {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return invalid(ReasonInvalidACL, fmt.Sprintf("spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs[%d]", i),
				"%q is not a CIDR", c)
		}
		cidrs = append(cidrs, p.Masked().String())
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionACL, Config: ACLConfig{AllowedCIDRs: cidrs}})
	return nil
}
