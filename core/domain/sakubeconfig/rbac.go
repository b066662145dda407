package sakubeconfig

import "strings"

// RBAC's matching of a policy rule against a request, as the API server's RBAC authorizer does it
// (k8s.io/kubernetes pkg/apis/rbac/v1 evaluation_helpers.go): verbs, API groups and resources match exactly
// (case-sensitively) or by the wildcard "*"; a resource "*/<sub>" matches the subresource <sub> of every resource
// (as "*/scale" does), while "<resource>/*" is no wildcard at all; a non-resource URL matches exactly, by "*", or by
// a trailing "*" as a prefix. The policy judges rules with these semantics, never with a looser reading of its own:
// a rule that the authorizer would match against a forbidden request must be refused.

// action is one request as RBAC authorizes it (namespaces are judged by the caller).
type action struct {
	// verb is the request's verb; "" stands for every verb (a rule with any verb at all matches).
	verb string
	// group, resource and subresource of the request ("" group: core; "" subresource: the resource itself).
	group, resource, subresource string
	// anySubresource: the action stands for every subresource of resource (userextras/<extra key>).
	anySubresource bool
}

// covers reports whether the RBAC authorizer would allow a with r (resourceNames are ignored: a rule restricted to
// some names still allows the action on those names).
func (r Rule) covers(a action) bool {
	return r.verbMatches(a.verb) && groupMatches(r.APIGroups, a.group) && r.resourceMatches(a)
}

func (r Rule) verbMatches(verb string) bool {
	if verb == "" {
		return len(r.Verbs) > 0
	}
	for _, v := range r.Verbs {
		if v == "*" || v == verb {
			return true
		}
	}
	return false
}

func groupMatches(groups []string, group string) bool {
	for _, g := range groups {
		if g == "*" || g == group {
			return true
		}
	}
	return false
}

func (r Rule) resourceMatches(a action) bool {
	for _, res := range r.Resources {
		if res == "*" {
			return true
		}
		if a.anySubresource {
			// Some subresource of a.resource: <resource>/<anything>, or */<anything> (which matches that
			// subresource of every resource).
			if sub, ok := strings.CutPrefix(res, a.resource+"/"); ok && sub != "" {
				return true
			}
			if sub, ok := strings.CutPrefix(res, "*/"); ok && sub != "" {
				return true
			}
			continue
		}
		combined := a.resource
		if a.subresource != "" {
			combined += "/" + a.subresource
		}
		if res == combined {
			return true
		}
		if a.subresource != "" && res == "*/"+a.subresource {
			return true
		}
	}
	return false
}

// urlReaches reports whether the non-resource URL pattern p (RBAC's: exact, "*", or a prefix ending in "*") matches
// a path that starts with prefix.
func urlReaches(p, prefix string) bool {
	if strings.HasSuffix(p, "*") {
		// Some path starts with both base and prefix.
		base := strings.TrimRight(p, "*")
		return strings.HasPrefix(prefix, base) || strings.HasPrefix(base, prefix)
	}
	return strings.HasPrefix(p, prefix)
}
