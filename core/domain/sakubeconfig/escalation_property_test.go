package sakubeconfig

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The property: whatever rule the policy allows, RBAC's authorizer never matches it against a forbidden request
// (escalate or bind on roles, impersonation anywhere; Secrets and TokenRequests, and writes of workloads and commands
// in Pods, in a system namespace or outside the ServiceAccount's namespace; the cluster powers: nodes/proxy and node
// writes, admission, certificate signing, API registration, PersistentVolume creation, namespace writes). The matcher below is written from RBAC's documented semantics independently of the
// policy's own (rbac.go), so a shared misreading does not hide.

// rbacRequest is the attributes RBAC authorizes: verb, API group, resource, subresource, namespace ("" for a
// cluster-scoped request).
type rbacRequest struct {
	verb, group, resource, subresource, namespace string
}

func (q rbacRequest) String() string {
	return fmt.Sprintf("%s %s/%s/%s in %q", q.verb, q.group, q.resource, q.subresource, q.namespace)
}

// rbacGrants: does a Role in each namespace of r.Namespaces (a ClusterRole bound cluster-wide when empty) allow q?
func rbacGrants(r Rule, q rbacRequest) bool {
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, q.namespace) {
		return false
	}
	in := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	if !in(r.Verbs, q.verb) || !in(r.APIGroups, q.group) {
		return false
	}
	want := q.resource
	if q.subresource != "" {
		want += "/" + q.subresource
	}
	for _, res := range r.Resources {
		if res == "*" || res == want || (q.subresource != "" && res == "*/"+q.subresource) {
			return true
		}
	}
	return false
}

var (
	propGroups = []string{"", "*", "rbac.authorization.k8s.io", "authentication.k8s.io", "apps", "batch", "example.com",
		"admissionregistration.k8s.io", "certificates.k8s.io", "apiregistration.k8s.io", "apiextensions.k8s.io"}
	propResources = []string{"*", "secrets", "secrets/*", "Secrets", "serviceaccounts", "serviceaccounts/token", "*/token", "*/scale", "*/scopes", "*/", "roles", "clusterroles", "rolebindings", "users", "groups", "uids", "userextras", "userextras/scopes", "userextras/*",
		"pods", "pods/*", "pods/exec", "pods/attach", "pods/ephemeralcontainers", "pods/portforward", "pods/log", "*/exec", "*/attach", "*/ephemeralcontainers",
		"replicationcontrollers", "deployments", "deployments/scale", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs",
		"nodes", "nodes/proxy", "*/proxy", "nodes/status", "nodes/metrics", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
		"certificatesigningrequests", "certificatesigningrequests/approval", "*/approval", "*/status", "signers", "apiservices",
		"customresourcedefinitions", "persistentvolumes", "persistentvolumeclaims", "namespaces", "namespaces/finalize"}
	propVerbs      = []string{"*", "get", "list", "watch", "create", "update", "patch", "delete", "escalate", "bind", "impersonate", "Impersonate", "GET", "use", "approve", "sign", "deletecollection"}
	propNamespaces = []string{"team-a", "team-b", "kube-system", "kube-public", "kyma-system", "istio-system"}
	propSubs       = []string{"scopes", "token", "x", "*"}
)

// forbidden lists the requests no allowed rule may grant to a ServiceAccount in own under p for owner's namespace.
func forbidden(p AccessPolicy, own, kcpNamespace string) []rbacRequest {
	var out []rbacRequest
	everywhere := append([]string{""}, propNamespaces...)
	for _, ns := range everywhere {
		for _, v := range []string{"escalate", "bind"} {
			for _, res := range []string{"roles", "clusterroles"} {
				out = append(out, rbacRequest{verb: v, group: "rbac.authorization.k8s.io", resource: res, namespace: ns})
			}
		}
		for _, res := range []string{"users", "groups", "serviceaccounts"} {
			out = append(out, rbacRequest{verb: "impersonate", resource: res, namespace: ns})
		}
		out = append(out, rbacRequest{verb: "impersonate", group: "authentication.k8s.io", resource: "uids", namespace: ns})
		for _, sub := range propSubs {
			out = append(out, rbacRequest{verb: "impersonate", group: "authentication.k8s.io", resource: "userextras", subresource: sub, namespace: ns})
		}
	}
	// Cluster powers: cluster-scoped requests (namespace ""), and writes of a namespace object, which RBAC
	// authorizes in the namespace it names.
	for _, v := range []string{"get", "create", "update", "patch", "delete"} {
		out = append(out, rbacRequest{verb: v, resource: "nodes", subresource: "proxy"})
	}
	for _, v := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		out = append(out, rbacRequest{verb: v, resource: "nodes"}, rbacRequest{verb: v, resource: "nodes", subresource: "status"},
			rbacRequest{verb: v, group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations"},
			rbacRequest{verb: v, group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies"},
			rbacRequest{verb: v, group: "apiregistration.k8s.io", resource: "apiservices"},
			rbacRequest{verb: v, group: "apiextensions.k8s.io", resource: "customresourcedefinitions"})
	}
	for _, v := range []string{"update", "patch"} {
		out = append(out, rbacRequest{verb: v, group: "certificates.k8s.io", resource: "certificatesigningrequests", subresource: "approval"},
			rbacRequest{verb: v, group: "certificates.k8s.io", resource: "certificatesigningrequests", subresource: "status"})
		for _, ns := range everywhere {
			out = append(out, rbacRequest{verb: v, resource: "namespaces", namespace: ns},
				rbacRequest{verb: v, resource: "namespaces", subresource: "finalize", namespace: ns})
		}
	}
	for _, ns := range everywhere {
		out = append(out, rbacRequest{verb: "delete", resource: "namespaces", namespace: ns})
	}
	out = append(out, rbacRequest{verb: "approve", group: "certificates.k8s.io", resource: "signers"},
		rbacRequest{verb: "sign", group: "certificates.k8s.io", resource: "signers"},
		rbacRequest{verb: "create", resource: "persistentvolumes"})
	allowed := !slices.Contains(p.ClusterWideSecretsNamespaces, kcpNamespace)
	for _, ns := range propNamespaces {
		system := ns == "kube-system" || slices.Contains(p.SystemNamespaces, ns) || (p.SystemNamespaces == nil && slices.Contains([]string{"kube-public", "kyma-system"}, ns))
		if !system && (ns == own || !allowed) {
			continue
		}
		for _, v := range propVerbs {
			out = append(out, rbacRequest{verb: v, resource: "secrets", namespace: ns},
				rbacRequest{verb: v, resource: "serviceaccounts", subresource: "token", namespace: ns},
				// A shell in a running Pod, with any verb (a WebSocket exec is authorized as get).
				rbacRequest{verb: v, resource: "pods", subresource: "exec", namespace: ns},
				rbacRequest{verb: v, resource: "pods", subresource: "attach", namespace: ns})
		}
		// A Pod of the writer's choice, as any ServiceAccount of the namespace.
		for _, v := range []string{"create", "update", "patch"} {
			out = append(out, rbacRequest{verb: v, resource: "pods", namespace: ns},
				rbacRequest{verb: v, resource: "pods", subresource: "ephemeralcontainers", namespace: ns},
				rbacRequest{verb: v, resource: "replicationcontrollers", namespace: ns})
			for _, res := range []string{"deployments", "replicasets", "statefulsets", "daemonsets"} {
				out = append(out, rbacRequest{verb: v, group: "apps", resource: res, namespace: ns})
			}
			for _, res := range []string{"jobs", "cronjobs"} {
				out = append(out, rbacRequest{verb: v, group: "batch", resource: res, namespace: ns})
			}
		}
	}
	return out
}

func pick(r *rand.Rand, pool []string, most int) []string {
	n := 1 + r.IntN(most)
	out := make([]string, 0, n)
	for range n {
		out = append(out, pool[r.IntN(len(pool))])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestPolicyNeverAllowsAForbiddenRequest(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	policies := []AccessPolicy{{}, {ClusterWideSecretsNamespaces: []string{"kcp-system"}}, {SystemNamespaces: []string{"istio-system"}}, {SystemNamespaces: []string{}}}
	allowedRules, iterations := 0, 20000
	if testing.Short() {
		iterations = 5000
		// The skipped subtest marks this run as shortened: make test-all runs the test again without -short, with every
		// iteration (test/cmd/testreport reruns a top-level test one of whose subtests skipped).
		t.Run("all-iterations", func(t *testing.T) {
			t.Skipf("-short runs %d iterations; all of them run without -short", iterations)
		})
	}
	for i := range iterations {
		p := policies[i%len(policies)]
		own := propNamespaces[r.IntN(len(propNamespaces))]
		rl := Rule{APIGroups: pick(r, propGroups, 2), Resources: pick(r, propResources, 3), Verbs: pick(r, propVerbs, 3)}
		if r.IntN(3) > 0 {
			rl.Namespaces = pick(r, propNamespaces, 2)
		}
		if r.IntN(5) == 0 {
			rl.ResourceNames = []string{"x"}
		}
		req := requestIn(own, rl)
		errRule := p.CheckRequest(req)
		// The same rule in a ClusterRole bound where the rule applies.
		req.ClusterRole = &ClusterRoleRef{Name: "bound", Namespaces: rl.Namespaces}
		bare := rl
		bare.Namespaces = nil
		errRole := p.CheckClusterRole(req, ClusterRole{Rules: []Rule{bare}})
		if (errRule == nil) != (errRole == nil) {
			t.Fatalf("rule %+v in %s: as a rule %v, in a bound ClusterRole %v", rl, own, errRule, errRole)
		}
		if errRule != nil {
			continue
		}
		allowedRules++
		for _, q := range forbidden(p, own, req.Owner.Namespace) {
			if rbacGrants(rl, q) {
				t.Fatalf("policy %+v allows rule %+v for a ServiceAccount in %s, and RBAC grants it %s", p, rl, own, q)
			}
		}
	}
	// The generator must reach both sides, or the property says nothing.
	if allowedRules < iterations/20 || allowedRules > iterations*9/10 {
		t.Errorf("%d of %d rules allowed: the generator is off balance", allowedRules, iterations)
	}
	t.Logf("%d of %d random rules allowed, none grants a forbidden request", allowedRules, iterations)
}

// TestRBACMatcherAgreesWithThePolicyMatcher pins the policy's matcher to the independent one on every pool entry.
func TestRBACMatcherAgreesWithThePolicyMatcher(t *testing.T) {
	for _, g := range propGroups {
		for _, res := range propResources {
			for _, v := range propVerbs {
				rl := Rule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}}
				for _, qg := range []string{"", "rbac.authorization.k8s.io", "authentication.k8s.io", "apps", "batch"} {
					for _, qr := range []string{"secrets", "serviceaccounts", "roles", "userextras", "pods", "deployments", "cronjobs", "nodes", "namespaces", "signers"} {
						for _, sub := range []string{"", "token", "scopes", "exec", "ephemeralcontainers", "proxy", "approval"} {
							for _, qv := range []string{"get", "create", "impersonate", "escalate", "approve"} {
								a := action{verb: qv, group: qg, resource: qr, subresource: sub}
								q := rbacRequest{verb: qv, group: qg, resource: qr, subresource: sub}
								if got, want := rl.covers(a), rbacGrants(rl, q); got != want {
									t.Errorf("rule %v %v %v on %s: policy matcher %v, RBAC %v", rl.Verbs, rl.APIGroups, rl.Resources, strings.TrimSpace(q.String()), got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
