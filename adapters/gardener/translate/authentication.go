package translate

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// AuthenticationConfigKey is the ConfigMap data key Gardener reads the structured authentication
// configuration from.
const AuthenticationConfigKey = "config.yaml"

// Minimal AuthenticationConfiguration (apiserver.config.k8s.io/v1beta1) shape.
type authenticationConfiguration struct {
	typeMeta `json:",inline"`
	JWT      []jwtAuthenticator `json:"jwt"`
}

type jwtAuthenticator struct {
	Issuer struct {
		URL                  string   `json:"url"`
		CertificateAuthority string   `json:"certificateAuthority,omitempty"`
		Audiences            []string `json:"audiences"`
		AudienceMatchPolicy  string   `json:"audienceMatchPolicy,omitempty"`
	} `json:"issuer"`
	ClaimValidationRules []claimValidationRule `json:"claimValidationRules,omitempty"`
	ClaimMappings        struct {
		Username prefixedClaim  `json:"username"`
		Groups   *prefixedClaim `json:"groups,omitempty"`
	} `json:"claimMappings"`
}

type prefixedClaim struct {
	Claim  string  `json:"claim"`
	Prefix *string `json:"prefix"`
}

type claimValidationRule struct {
	Claim         string `json:"claim"`
	RequiredValue string `json:"requiredValue"`
}

// AuthenticationConfigMapData renders the data of the ConfigMap named auth.ConfigMapName that the
// shoot's kubeAPIServer.structuredAuthentication references. The controller must create that
// ConfigMap in the shoot's namespace before it creates or updates the shoot: the
// gardener-apiserver rejects a reference to a missing ConfigMap. An issuer's CA bundle becomes its
// certificateAuthority; an inline JWKS cannot be expressed in this format (Kubernetes up to 1.36), which is why
// the domain refuses issuers with one instead of dropping it here.
func AuthenticationConfigMapData(auth *shoot.Authentication) (map[string]string, error) {
	if auth == nil {
		return nil, nil
	}
	cfg := authenticationConfiguration{typeMeta: typeMeta{"apiserver.config.k8s.io/v1beta1", "AuthenticationConfiguration"}}
	for _, a := range auth.JWT {
		var j jwtAuthenticator
		j.Issuer.URL = a.Issuer
		j.Issuer.CertificateAuthority = a.CertificateAuthority
		j.Issuer.Audiences = a.Audiences
		if len(a.Audiences) > 1 {
			j.Issuer.AudienceMatchPolicy = "MatchAny"
		}
		usernamePrefix := a.UsernamePrefix
		j.ClaimMappings.Username = prefixedClaim{Claim: a.UsernameClaim, Prefix: &usernamePrefix}
		// The previous manager's authenticators always had a groups mapping (an empty claim maps no groups).
		if a.GroupsClaim != "" || a.Previous {
			groupsPrefix := a.GroupsPrefix
			j.ClaimMappings.Groups = &prefixedClaim{Claim: a.GroupsClaim, Prefix: &groupsPrefix}
		}
		for _, k := range sortedKeys(a.RequiredClaims) {
			j.ClaimValidationRules = append(j.ClaimValidationRules, claimValidationRule{Claim: k, RequiredValue: a.RequiredClaims[k]})
		}
		cfg.JWT = append(cfg.JWT, j)
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	return map[string]string{AuthenticationConfigKey: string(b)}, nil
}
