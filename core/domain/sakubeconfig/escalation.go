package sakubeconfig

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Refusals of the access policy. Each is final for the request as it is: a person must change the request (or the
// landscape configuration), retrying changes nothing.
var (
	// ErrEscalation: a rule (or the bound ClusterRole) would let the ServiceAccount gain more than its rules say,
	// or reach Secrets cluster-wide without the landscape's consent.
	ErrEscalation = errors.New("privilege escalation refused")
	// ErrInvalid: the request is malformed (admission normally refuses it first).
	ErrInvalid = errors.New("invalid request")
)

// Refusal says which part of a request is refused and why. It wraps ErrEscalation or ErrInvalid.
type Refusal struct {
	// Field is the path of the refused part, e.g. spec.rules[1].
	Field string
	// Detail explains the refusal in words.
	Detail string
	kind   error
}

func (r *Refusal) Error() string { return r.Field + ": " + r.Detail }

// Unwrap returns ErrEscalation or ErrInvalid.
func (r *Refusal) Unwrap() error { return r.kind }

// AccessPolicy is the landscape's part of the no-escalation policy.
type AccessPolicy struct {
	// ClusterWideSecretsNamespaces are the KCP namespaces whose requests may reach Secrets (and ServiceAccount
	// tokens) cluster-wide. Empty: none may.
	ClusterWideSecretsNamespaces []string
}

// Verbs that grant more than a rule lists: escalate and bind create or bind roles with permissions the ServiceAccount
// does not hold, impersonate acts as someone else.
var escalatingVerbs = []string{"escalate", "bind", "impersonate"}

// resourceSet is a set of resources in API groups.
type resourceSet struct {
	groups    []string
	resources []string
}

var (
	// roleResources carry escalate and bind.
	roleResources = resourceSet{groups: []string{"rbac.authorization.k8s.io"}, resources: []string{"roles", "clusterroles"}}
	// impersonationResources carry impersonate.
	impersonationResources = []resourceSet{
		{groups: []string{""}, resources: []string{"users", "groups", "serviceaccounts"}},
		{groups: []string{"authentication.k8s.io"}, resources: []string{"uids", "userextras"}},
	}
	// credentialResources hold or mint credentials of other identities: Secrets, and tokens of any ServiceAccount.
	credentialResources = resourceSet{groups: []string{""}, resources: []string{"secrets", "serviceaccounts/token"}}
)

// matches reports whether a rule with these groups and resources covers any resource of s.
func (s resourceSet) matches(groups, resources []string) bool {
	if !slices.Contains(groups, "*") && !slices.ContainsFunc(s.groups, func(g string) bool { return slices.Contains(groups, g) }) {
		return false
	}
	for _, r := range resources {
		if r == "*" || slices.Contains(s.resources, r) {
			return true
		}
		// "secrets/*" and "userextras/scopes" name subresources of the resources in s.
		if base, _, ok := strings.Cut(r, "/"); ok && slices.Contains(s.resources, base) {
			return true
		}
	}
	return false
}

// CheckRequest refuses a request the policy does not allow: malformed parts (ErrInvalid) and rules that escalate
// (ErrEscalation). The error is a *Refusal naming the first refused rule; a nil error means every rule is allowed.
// A bound ClusterRole is checked separately by CheckClusterRole, once its rules are known.
func (p AccessPolicy) CheckRequest(req Request) error {
	if err := checkShape(req); err != nil {
		return err
	}
	secretsOK := slices.Contains(p.ClusterWideSecretsNamespaces, req.Owner.Namespace)
	for i, r := range req.Rules {
		field := fmt.Sprintf("spec.rules[%d]", i)
		if msg := ruleProblem(r, len(r.Namespaces) == 0, secretsOK, req.Owner.Namespace); msg != "" {
			return &Refusal{Field: field, Detail: msg, kind: ErrEscalation}
		}
	}
	return nil
}

// CheckClusterRole refuses binding the ClusterRole req.ClusterRole names when its rules (as the runtime holds them)
// escalate where they are bound: the same policy as for the request's own rules.
func (p AccessPolicy) CheckClusterRole(req Request, rules []Rule) error {
	ref := req.ClusterRole
	if ref == nil {
		return nil
	}
	secretsOK := slices.Contains(p.ClusterWideSecretsNamespaces, req.Owner.Namespace)
	for i, r := range rules {
		if msg := ruleProblem(r, len(ref.Namespaces) == 0, secretsOK, req.Owner.Namespace); msg != "" {
			return &Refusal{Field: "spec.clusterRole", kind: ErrEscalation, Detail: fmt.Sprintf("ClusterRole %s rule %d (%s): %s", ref.Name, i, describeRule(r), msg)}
		}
	}
	return nil
}

// ruleProblem says why r is refused ("" when it is not).
func ruleProblem(r Rule, clusterWide, secretsOK bool, requester string) string {
	for _, v := range r.Verbs {
		if slices.Contains(escalatingVerbs, strings.ToLower(v)) {
			return fmt.Sprintf("verb %q is refused: it lets the ServiceAccount grant itself or act with permissions beyond its rules", v)
		}
	}
	anyVerb := slices.Contains(r.Verbs, "*")
	switch {
	case anyVerb && slices.Contains(r.Resources, "*"):
		return `wildcard verbs on wildcard resources are refused: name the resources and verbs the component needs`
	case anyVerb && roleResources.matches(r.APIGroups, r.Resources):
		return fmt.Sprintf("wildcard verbs on %v include escalate and bind, which are refused: list the verbs", r.Resources)
	case anyVerb && slices.ContainsFunc(impersonationResources, func(s resourceSet) bool { return s.matches(r.APIGroups, r.Resources) }):
		return fmt.Sprintf("wildcard verbs on %v include impersonate, which is refused: list the verbs", r.Resources)
	case clusterWide && !secretsOK && credentialResources.matches(r.APIGroups, r.Resources):
		return fmt.Sprintf("Secrets and ServiceAccount tokens cluster-wide (resources %v in API groups %q without namespaces) are refused: "+
			"name the namespaces, or allow KCP namespace %q in serviceAccountKubeconfigs.clusterWideSecretsNamespaces of the landscape configuration",
			r.Resources, r.APIGroups, requester)
	}
	return ""
}

func describeRule(r Rule) string {
	return fmt.Sprintf("verbs %v on %v in API groups %q", r.Verbs, r.Resources, r.APIGroups)
}

// checkShape refuses what admission normally refuses already: the operator never acts on a malformed request.
func checkShape(req Request) error {
	invalid := func(field, format string, args ...any) error {
		return &Refusal{Field: field, Detail: fmt.Sprintf(format, args...), kind: ErrInvalid}
	}
	switch {
	case req.RuntimeID == "":
		return invalid("spec.runtimeID", "must not be empty")
	case req.ServiceAccount.Name == "" || req.ServiceAccount.Namespace == "":
		return invalid("spec.serviceAccount", "name and namespace must not be empty")
	case req.SecretName == "":
		return invalid("spec.secretName", "must not be empty")
	case req.Validity < MinValidity || req.Validity > MaxValidity:
		return invalid("spec.validity", "%s is outside [%s, %s]", req.Validity, MinValidity, MaxValidity)
	case len(req.Rules) == 0 && req.ClusterRole == nil:
		return invalid("spec", "at least one rule or a clusterRole is required")
	case req.ClusterRole != nil && req.ClusterRole.Name == "":
		return invalid("spec.clusterRole.name", "must not be empty")
	}
	for i, r := range req.Rules {
		if len(r.Verbs) == 0 || len(r.Resources) == 0 || len(r.APIGroups) == 0 {
			return invalid(fmt.Sprintf("spec.rules[%d]", i), "apiGroups, resources and verbs must not be empty")
		}
		if slices.Contains(r.Namespaces, "") {
			return invalid(fmt.Sprintf("spec.rules[%d].namespaces", i), "must not contain an empty name")
		}
	}
	return checkSecretName(req.SecretName)
}
