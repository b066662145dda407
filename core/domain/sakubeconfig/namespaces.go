package sakubeconfig

import (
	"fmt"
	"slices"
)

// AnnotationCreatedFor marks a runtime namespace the operator created for a request: the owner as
// <namespace>/<name> (Owner.String()). Secrets, ServiceAccount tokens and workloads are allowed only in a namespace
// that carries it for the request (or one the landscape shares): whatever lived in a namespace before the request
// (istiod's ServiceAccount in istio-system, a customer's Secrets) stays out of its reach. Written once, when the
// operator creates the namespace; never added to a namespace that exists.
const AnnotationCreatedFor = "infrastructuremanager.kyma-project.io/created-for"

// Refusal codes of a namespace claim that fails in the runtime.
const (
	// CodeCredentialsExistingNamespace: Secrets or ServiceAccount tokens in a namespace that existed before the
	// request (the operator did not create it for it) and the landscape does not share.
	CodeCredentialsExistingNamespace RefusalCode = "CredentialsInExistingNamespace"
	// CodeWorkloadsExistingNamespace: workloads or commands in Pods in such a namespace.
	CodeWorkloadsExistingNamespace RefusalCode = "WorkloadsInExistingNamespace"
)

// NamespaceClaim is a runtime namespace in which a request reaches Secrets, ServiceAccount tokens or workloads: it
// must be the request's own, created by the operator for it.
type NamespaceClaim struct {
	Namespace string
	// Field is the part of the request that reaches it (spec.rules[i], spec.clusterRole); Code the refusal when the
	// namespace is not the request's; What describes the rule.
	Field, What string
	Code        RefusalCode
}

// NamespaceClaims lists, once per namespace and in the order of the request, the namespaces in which req's rules,
// and the rules of the bound ClusterRole (role, nil when none is bound), reach Secrets, ServiceAccount tokens or
// workloads, less those the landscape shares. Cluster-wide reaches are not listed: CheckRequest and
// CheckClusterRole refuse them.
func (p AccessPolicy) NamespaceClaims(req Request, role *ClusterRole) []NamespaceClaim {
	var out []NamespaceClaim
	add := func(field string, r Rule, namespaces []string) {
		for _, c := range reaches {
			if !slices.ContainsFunc(c.actions, r.covers) {
				continue
			}
			for _, ns := range namespaces {
				if slices.Contains(p.SharedNamespaces, ns) || slices.ContainsFunc(out, func(x NamespaceClaim) bool { return x.Namespace == ns }) {
					continue
				}
				out = append(out, NamespaceClaim{Namespace: ns, Field: field, What: c.what(r), Code: c.existing})
			}
		}
	}
	for i, r := range req.Rules {
		add(fmt.Sprintf("spec.rules[%d]", i), r, r.Namespaces)
	}
	if ref := req.ClusterRole; ref != nil && role != nil {
		for _, r := range role.Rules {
			if len(r.Resources) > 0 {
				add("spec.clusterRole", r, ref.Namespaces)
			}
		}
	}
	return out
}

// ClaimedNamespaces are the names of claims.
func ClaimedNamespaces(claims []NamespaceClaim) []string {
	out := make([]string, 0, len(claims))
	for _, c := range claims {
		out = append(out, c.Namespace)
	}
	return out
}

// NamespaceNotCreatedError: a claimed namespace exists and was not created by the operator for the request.
type NamespaceNotCreatedError struct {
	Namespace string
	// CreatedFor is the owner the namespace was created for ("" when the operator did not create it for any).
	CreatedFor string
}

func (e *NamespaceNotCreatedError) Error() string {
	if e.CreatedFor == "" {
		return fmt.Sprintf("namespace %s existed before the request (the operator did not create it for it)", e.Namespace)
	}
	return fmt.Sprintf("namespace %s was created for ServiceAccountKubeconfig %s, not for this request", e.Namespace, e.CreatedFor)
}

// CheckNamespaceCreatedFor decides whether the existing namespace ns, with these annotations, was created by the
// operator for owner: only then may a claim of owner hold it.
func CheckNamespaceCreatedFor(owner Owner, ns string, annotations map[string]string) error {
	if got := annotations[AnnotationCreatedFor]; got != owner.String() {
		return &NamespaceNotCreatedError{Namespace: ns, CreatedFor: got}
	}
	return nil
}

// NamespaceAnnotations are the annotations of a namespace the operator creates for owner.
func NamespaceAnnotations(owner Owner) map[string]string {
	return map[string]string{AnnotationCreatedFor: owner.String()}
}

// RefuseClaim turns a failed claim into the refusal of the part of the request that made it (ErrEscalation).
func RefuseClaim(claims []NamespaceClaim, e *NamespaceNotCreatedError) error {
	c := NamespaceClaim{Namespace: e.Namespace, Field: "spec", What: "Secrets, ServiceAccount tokens or workloads", Code: CodeCredentialsExistingNamespace}
	if i := slices.IndexFunc(claims, func(x NamespaceClaim) bool { return x.Namespace == e.Namespace }); i >= 0 {
		c = claims[i]
	}
	return &Refusal{Field: c.Field, Code: c.Code, kind: ErrEscalation, Detail: fmt.Sprintf(
		"%s in namespace %q are refused: %v, and whatever lived there before (the ServiceAccounts of its workloads, their Secrets) must stay out of the request's reach; "+
			"choose a namespace that does not exist yet (the operator creates it for the request), or name it in serviceAccountKubeconfigs.sharedNamespaces of the landscape configuration",
		c.What, c.Namespace, e)}
}
