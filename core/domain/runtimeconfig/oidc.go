package runtimeconfig

import (
	"maps"
	"slices"
	"strconv"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// OIDCResource is one OpenIDConnect resource (authentication.gardener.cloud/v1alpha1, cluster-scoped), served by
// the shoot-oidc-service extension's authenticator: the runtime's API server accepts tokens of its issuer.
type OIDCResource struct {
	Name      string
	IssuerURL string
	ClientID  string
	// UsernameClaim is required by the resource; the API server's default, sub, when the Runtime sets none.
	UsernameClaim string
	// UsernamePrefix and GroupsPrefix pass through as the Runtime sets them: nil leaves the authenticator's default
	// ("<resource name>/"), "-" means no prefix (as with the previous infrastructure manager).
	UsernamePrefix *string
	GroupsClaim    string
	GroupsPrefix   *string
	// CABundle is the PEM bundle the authenticator verifies the issuer's TLS certificate with (base64 on the wire).
	CABundle string
	// SupportedSigningAlgs are the accepted algorithms; empty leaves the resource's default (RS256).
	SupportedSigningAlgs []string
	RequiredClaims       map[string]string
	// JWKS is the issuer's key set (the resource's jwks.keys): the authenticator does not fetch the keys then.
	JWKS []byte
}

// OIDCName names the resource of the customer issuer at position n.
func OIDCName(n int) string { return OIDCNamePrefix + strconv.Itoa(n) }

// oidcResources maps the customer issuers, in order, to their resources.
func oidcResources(issuers []shoot.CustomerIssuer) []OIDCResource {
	out := make([]OIDCResource, 0, len(issuers))
	for i, c := range issuers {
		r := OIDCResource{Name: OIDCName(i), IssuerURL: c.IssuerURL, ClientID: c.ClientID, UsernameClaim: c.UsernameClaim,
			UsernamePrefix: clonePtr(c.UsernamePrefix), GroupsClaim: c.GroupsClaim, GroupsPrefix: clonePtr(c.GroupsPrefix),
			CABundle: c.CABundle, SupportedSigningAlgs: slices.Clone(c.SigningAlgs), JWKS: slices.Clone(c.JWKS)}
		if r.UsernameClaim == "" {
			r.UsernameClaim = "sub"
		}
		if len(c.RequiredClaims) > 0 {
			r.RequiredClaims = maps.Clone(c.RequiredClaims)
		}
		out = append(out, r)
	}
	return out
}

func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ObservedOIDC is an OpenIDConnect resource found in the runtime.
type ObservedOIDC struct {
	OIDCResource
	// Managed is true when it carries LabelOIDCManagedBy=ManagedByValue (the operator's, or the previous system's).
	Managed bool
}

// OIDCPlan is what to write: Apply first (create or correct), then Delete (names of the operator's resources no
// issuer needs any more), so an issuer that stays is never without a resource.
type OIDCPlan struct {
	Apply  []OIDCResource
	Delete []string
}

// PlanOIDC compares the resources found in the runtime with the desired ones. A desired resource is applied when
// it is missing, not labelled as the operator's, or differs in any field the operator sets. Only labelled resources
// are deleted; a resource someone created under another name is never touched.
func PlanOIDC(observed []ObservedOIDC, desired []OIDCResource) OIDCPlan {
	byName := map[string]ObservedOIDC{}
	for _, o := range observed {
		byName[o.Name] = o
	}
	var plan OIDCPlan
	want := map[string]bool{}
	for _, d := range desired {
		want[d.Name] = true
		if o, ok := byName[d.Name]; !ok || !o.Managed || !sameOIDC(d, o.OIDCResource) {
			plan.Apply = append(plan.Apply, d)
		}
	}
	for _, o := range observed {
		if o.Managed && !want[o.Name] {
			plan.Delete = append(plan.Delete, o.Name)
		}
	}
	slices.Sort(plan.Delete)
	return plan
}

// sameOIDC compares every field the operator sets; unset signing algorithms match the resource's default.
func sameOIDC(want, got OIDCResource) bool {
	algs := slices.Equal(want.SupportedSigningAlgs, got.SupportedSigningAlgs) ||
		len(want.SupportedSigningAlgs) == 0 && slices.Equal(got.SupportedSigningAlgs, []string{"RS256"})
	return algs && want.IssuerURL == got.IssuerURL && want.ClientID == got.ClientID && want.UsernameClaim == got.UsernameClaim &&
		equalPtr(want.UsernamePrefix, got.UsernamePrefix) && want.GroupsClaim == got.GroupsClaim &&
		equalPtr(want.GroupsPrefix, got.GroupsPrefix) && want.CABundle == got.CABundle &&
		maps.Equal(want.RequiredClaims, got.RequiredClaims) && string(want.JWKS) == string(got.JWKS)
}

func equalPtr(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
