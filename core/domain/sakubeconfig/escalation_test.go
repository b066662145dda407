package sakubeconfig

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func request(rules ...Rule) Request {
	return Request{
		Owner: Owner{Namespace: "kcp-system", Name: "lifecycle-manager-rid"}, RuntimeID: "rid",
		ServiceAccount: ServiceAccount{Namespace: "kyma-system", Name: "lifecycle-manager"},
		Rules:          rules, Validity: DefaultValidity, SecretName: "lifecycle-manager-rid-kubeconfig",
	}
}

func rule(ns []string, groups, resources, verbs []string) Rule {
	return Rule{Namespaces: ns, APIGroups: groups, Resources: resources, Verbs: verbs}
}

var (
	core       = []string{""}
	anyGroup   = []string{"*"}
	rbacGroup  = []string{"rbac.authorization.k8s.io"}
	kymaSystem = []string{"kyma-system"}
	readOnly   = []string{"get", "list", "watch"}
)

// requestIn is request with the ServiceAccount in namespace ns (not a system namespace, unlike kyma-system).
func requestIn(ns string, rules ...Rule) Request {
	r := request(rules...)
	r.ServiceAccount.Namespace = ns
	return r
}

var (
	kubeSystem = []string{"kube-system"}
	teamA      = []string{"team-a"}
	allVerbs   = []string{"*"}
)

// checkRefusal fails t unless err is a refusal wrapping want, naming field, of code, and mentioning mention.
func checkRefusal(t *testing.T, err, want error, field string, code RefusalCode, mention string) {
	t.Helper()
	var ref *Refusal
	if !errors.Is(err, want) || !errors.As(err, &ref) {
		t.Fatalf("err = %v, want a refusal wrapping %v", err, want)
	}
	if ref.Field != field || !strings.HasPrefix(err.Error(), field+": ") {
		t.Errorf("refusal names %q (%v), want %q", ref.Field, err, field)
	}
	if code != "" && ref.Code != code {
		t.Errorf("refusal code %q (%v), want %q", ref.Code, err, code)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Errorf("refusal %q does not mention %q", err, mention)
	}
}

func TestCheckRequest(t *testing.T) {
	cases := []struct {
		reason  string
		req     Request
		policy  AccessPolicy
		want    error
		field   string
		code    RefusalCode
		mention string
	}{
		{reason: "get/list pods in kyma-system", req: request(rule(kymaSystem, core, []string{"pods"}, []string{"get", "list"}))},
		{reason: "read-only on everything in the ServiceAccount's own namespace, Secrets included",
			req: requestIn("team-a", rule(teamA, anyGroup, []string{"*"}, readOnly))},
		{reason: "cluster-wide read of pods", req: request(rule(nil, core, []string{"pods"}, readOnly))},
		{reason: "*/scale cluster-wide is no credential", req: request(rule(nil, anyGroup, []string{"*/scale"}, []string{"get", "update"}))},
		{reason: "a second rule escalates: named by index", want: ErrEscalation, field: "spec.rules[1]", code: CodeEscalatingVerb, mention: `"escalate"`,
			req: request(rule(kymaSystem, core, []string{"pods"}, readOnly), rule(nil, rbacGroup, []string{"clusterroles"}, []string{"escalate"}))},
		{reason: "bind", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: `"bind"`,
			req: request(rule(kymaSystem, rbacGroup, []string{"rolebindings", "roles"}, []string{"create", "bind"}))},
		{reason: "impersonate, in any case", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: `"Impersonate"`,
			req: request(rule(nil, core, []string{"users"}, []string{"Impersonate"}))},
		{reason: "wildcard verbs on wildcard resources, even in one namespace", want: ErrEscalation, field: "spec.rules[0]", code: CodeEverything,
			mention: "wildcard verbs on wildcard resources", req: request(rule(kymaSystem, core, []string{"*"}, []string{"*"}))},
		{reason: "wildcard verbs on roles include escalate", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: "escalate and bind",
			req: request(rule(kymaSystem, rbacGroup, []string{"roles"}, []string{"*"}))},
		{reason: "wildcard verbs on clusterroles in any group", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: "escalate and bind",
			req: request(rule(nil, anyGroup, []string{"clusterroles"}, []string{"*"}))},
		{reason: "wildcard verbs on rolebindings are not escalate or bind (RBAC checks bindings itself)",
			req: request(rule(kymaSystem, rbacGroup, []string{"rolebindings"}, []string{"*"}))},
		{reason: "wildcard verbs on serviceaccounts include impersonate", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: "impersonate",
			req: request(rule(kymaSystem, core, []string{"serviceaccounts"}, []string{"*"}))},
		{reason: "wildcard verbs on userextras subresources include impersonate", want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, mention: "impersonate",
			req: request(rule(nil, []string{"authentication.k8s.io"}, []string{"userextras/scopes"}, []string{"*"}))},
		{reason: "*/scopes is a subresource wildcard: it includes impersonating userextras/scopes", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeEscalatingVerb, mention: "impersonate", req: request(rule(nil, []string{"authentication.k8s.io"}, []string{"*/scopes"}, []string{"*"}))},
		{reason: "wildcard verbs on deployments in the ServiceAccount's own namespace", req: requestIn("team-a", rule(teamA, []string{"apps"}, []string{"deployments"}, []string{"*"}))},
		{reason: "wildcard verbs on deployments in a system namespace: a Deployment runs as any of its ServiceAccounts", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, mention: `"kyma-system"`, req: request(rule(kymaSystem, []string{"apps"}, []string{"deployments"}, []string{"*"}))},
		{reason: "create pods in kube-system: a Pod may name a controller's ServiceAccount", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, mention: `"kube-system"`, req: requestIn("team-a", rule(kubeSystem, core, []string{"pods"}, []string{"create"}))},
		{reason: "update pods in kube-system: a new image runs with the Pod's token", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"pods"}, []string{"update"}))},
		{reason: "patch daemonsets in kube-system: a changed template runs as any ServiceAccount", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, []string{"apps"}, []string{"daemonsets"}, []string{"patch"}))},
		{reason: "replicationcontrollers of the core group in kube-system", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"replicationcontrollers"}, []string{"create"}))},
		{reason: "every resource of the apps group in kube-system includes deployments", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, []string{"apps"}, []string{"*"}, []string{"create"}))},
		{reason: "cronjobs cluster-wide", want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsClusterWide, mention: "cluster-wide are refused",
			req: requestIn("team-a", rule(nil, []string{"batch"}, []string{"cronjobs"}, []string{"create"}))},
		{reason: "jobs in any group cluster-wide", want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsClusterWide,
			req: requestIn("team-a", rule(nil, anyGroup, []string{"jobs"}, []string{"patch"}))},
		{reason: "get pods/exec in kube-system: a WebSocket exec is authorized as get", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, mention: "pods/exec", req: requestIn("team-a", rule(kubeSystem, core, []string{"pods/exec"}, []string{"get"}))},
		{reason: "*/exec cluster-wide: RBAC's subresource wildcard includes pods/exec", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsClusterWide, mention: "*/exec", req: requestIn("team-a", rule(nil, anyGroup, []string{"*/exec"}, []string{"create"}))},
		{reason: "pods/attach in another namespace", want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsOtherNamespace, mention: "clusterWideSecretsNamespaces",
			req: requestIn("team-a", rule([]string{"team-b"}, core, []string{"pods/attach"}, []string{"create"}))},
		{reason: "create pods in another namespace", want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsOtherNamespace, mention: `"team-b"`,
			req: requestIn("team-a", rule([]string{"team-a", "team-b"}, core, []string{"pods"}, []string{"create"}))},
		{reason: "patch pods/ephemeralcontainers in kube-system: a debug container of the writer's choice", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"pods/ephemeralcontainers"}, []string{"patch"}))},
		{reason: "*/ephemeralcontainers with wildcard verbs in kube-public", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule([]string{"kube-public"}, core, []string{"*/ephemeralcontainers"}, allVerbs))},
		{reason: "Secrets are judged before workloads", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace,
			req: requestIn("team-a", rule(kubeSystem, core, []string{"pods", "secrets"}, []string{"create"}))},
		{reason: "read-only on workloads cluster-wide", req: requestIn("team-a",
			rule(nil, []string{"", "apps", "batch"}, []string{"pods", "pods/log", "replicationcontrollers", "deployments", "daemonsets", "statefulsets", "replicasets", "jobs", "cronjobs"}, readOnly))},
		{reason: "reading ephemeral containers in kube-system", req: requestIn("team-a", rule(kubeSystem, core, []string{"pods/ephemeralcontainers"}, []string{"get"}))},
		{reason: "pods/portforward in kube-system reaches ports, not the token", req: requestIn("team-a", rule(kubeSystem, core, []string{"pods/portforward"}, []string{"get", "create"}))},
		{reason: "scaling deployments in kube-system keeps their template", req: requestIn("team-a", rule(kubeSystem, []string{"apps"}, []string{"deployments/scale"}, []string{"update", "patch"}))},
		{reason: "deleting pods in kube-system starts no other code", req: requestIn("team-a", rule(kubeSystem, core, []string{"pods"}, []string{"delete"}))},
		{reason: "deployments of another API group are no workloads", req: requestIn("team-a", rule(nil, []string{"example.com"}, []string{"deployments", "jobs"}, []string{"create"}))},
		{reason: "create pods and exec in the ServiceAccount's own namespace", req: requestIn("team-a", rule(teamA, core, []string{"pods", "pods/exec"}, []string{"create"}))},
		{reason: "workloads in another namespace for an allowed KCP namespace", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			req: requestIn("team-a", rule([]string{"istio-system"}, []string{"apps"}, []string{"deployments"}, []string{"create"}))},
		{reason: "the allowance never reaches workloads in a system namespace", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"pods"}, []string{"create"}))},
		{reason: "the landscape's system namespaces hold for workloads", policy: AccessPolicy{SystemNamespaces: []string{"istio-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeWorkloadsSystemNamespace, mention: `"istio-system"`,
			req: requestIn("istio-system", rule([]string{"istio-system"}, []string{"batch"}, []string{"jobs"}, []string{"create"}))},
		{reason: "Secrets cluster-wide", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsClusterWide, mention: "cluster-wide",
			req: request(rule(nil, core, []string{"secrets"}, []string{"get"}))},
		{reason: "everything cluster-wide includes Secrets", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsClusterWide, mention: "Secrets",
			req: request(rule(nil, anyGroup, []string{"*"}, readOnly))},
		{reason: "tokens of any ServiceAccount cluster-wide", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsClusterWide, mention: "ServiceAccount tokens",
			req: request(rule(nil, core, []string{"serviceaccounts/token"}, []string{"create"}))},
		{reason: "*/token cluster-wide: RBAC's subresource wildcard mints the token of every ServiceAccount", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeCredentialsClusterWide, mention: "*/token", req: request(rule(nil, core, []string{"*/token"}, []string{"create"}))},
		{reason: "*/token in any group, in the ServiceAccount's own namespace, is refused in a system namespace", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeCredentialsSystemNamespace, mention: `"kyma-system"`, req: request(rule(kymaSystem, anyGroup, []string{"*/token"}, []string{"create"}))},
		{reason: "serviceaccounts/token create in kube-system: the controllers' tokens are cluster-admin", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeCredentialsSystemNamespace, mention: `"kube-system"`,
			req: requestIn("team-a", rule(kubeSystem, core, []string{"serviceaccounts/token"}, []string{"create"}))},
		{reason: "wildcard verbs on serviceaccounts/token in kube-system", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace,
			mention: `"kube-system"`, req: requestIn("team-a", rule(kubeSystem, core, []string{"serviceaccounts/token"}, allVerbs))},
		{reason: "Secrets in kube-system, even of one name", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace, mention: `"kube-system"`,
			req: requestIn("team-a", Rule{Namespaces: kubeSystem, APIGroups: core, Resources: []string{"secrets"}, ResourceNames: []string{"x"}, Verbs: []string{"get"}})},
		{reason: "Secrets in the ServiceAccount's own namespace when it is a system namespace", want: ErrEscalation, field: "spec.rules[0]",
			code: CodeCredentialsSystemNamespace, mention: `"kyma-system"`, req: request(rule(kymaSystem, core, []string{"secrets"}, readOnly))},
		{reason: "read-only on everything in kube-public includes Secrets", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace,
			mention: `"kube-public"`, req: requestIn("team-a", rule([]string{"kube-public"}, core, []string{"*"}, readOnly))},
		{reason: "a verb in another case on Secrets in kube-system is refused too (it grants nothing, and looks like it does)", want: ErrEscalation,
			field: "spec.rules[0]", code: CodeCredentialsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"secrets"}, []string{"GET"}))},
		{reason: "Secrets in the ServiceAccount's own namespace", req: requestIn("team-a", rule(teamA, core, []string{"secrets"}, readOnly))},
		{reason: "its own token in its own namespace", req: requestIn("team-a", Rule{Namespaces: teamA, APIGroups: core, Resources: []string{"serviceaccounts/token"},
			ResourceNames: []string{"lifecycle-manager"}, Verbs: []string{"create"}})},
		{reason: "Secrets in another namespace", want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsOtherNamespace, mention: "clusterWideSecretsNamespaces",
			req: requestIn("team-a", rule([]string{"team-a", "istio-system"}, core, []string{"secrets"}, readOnly))},
		{reason: "secrets of another API group are not Secrets", req: request(rule(nil, []string{"example.com"}, []string{"secrets"}, readOnly))},
		{reason: "secrets/* is no wildcard in RBAC: it names no Secret", req: request(rule(nil, core, []string{"secrets/*"}, readOnly))},
		{reason: "Secrets in another namespace for an allowed KCP namespace", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			req: requestIn("team-a", rule([]string{"istio-system"}, core, []string{"secrets"}, readOnly))},
		{reason: "the allowance never reaches a system namespace", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace, req: requestIn("team-a", rule(kubeSystem, core, []string{"secrets"}, readOnly))},
		{reason: "the allowance never reaches cluster-wide (that is every system namespace)", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsClusterWide, req: request(rule(nil, core, []string{"secrets"}, readOnly))},
		{reason: "the allowance is for Secrets only, not for escalate", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeEscalatingVerb, req: request(rule(nil, rbacGroup, []string{"roles"}, []string{"escalate"}))},
		{reason: "another KCP namespace's allowance does not count", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"other"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsOtherNamespace, req: requestIn("team-a", rule([]string{"istio-system"}, core, []string{"secrets"}, readOnly))},
		{reason: "the landscape's system namespaces replace the defaults", policy: AccessPolicy{SystemNamespaces: []string{"istio-system"}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace, mention: `"istio-system"`,
			req: requestIn("istio-system", rule([]string{"istio-system"}, core, []string{"secrets"}, readOnly))},
		{reason: "kube-system is a system namespace whatever the landscape says", policy: AccessPolicy{SystemNamespaces: []string{}},
			want: ErrEscalation, field: "spec.rules[0]", code: CodeCredentialsSystemNamespace, req: requestIn("kube-system", rule(kubeSystem, core, []string{"secrets"}, readOnly))},
		{reason: "kyma-system is no system namespace when the landscape says so", policy: AccessPolicy{SystemNamespaces: []string{"kube-public"}},
			req: request(rule(kymaSystem, core, []string{"secrets"}, readOnly))},
		{reason: "no rules and no ClusterRole", want: ErrInvalid, field: "spec", code: CodeInvalid, req: request()},
		{reason: "validity below the TokenRequest minimum", want: ErrInvalid, field: "spec.validity", code: CodeInvalid,
			req: func() Request {
				r := request(rule(kymaSystem, core, []string{"pods"}, readOnly))
				r.Validity = time.Minute
				return r
			}()},
		{reason: "a rule without verbs", want: ErrInvalid, field: "spec.rules[0]", code: CodeInvalid, req: request(rule(kymaSystem, core, []string{"pods"}, nil))},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			err := tc.policy.CheckRequest(tc.req)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkRefusal(t, err, tc.want, tc.field, tc.code, tc.mention)
		})
	}
}

func TestCheckClusterRole(t *testing.T) {
	view := ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods", "configmaps"}, readOnly)}}
	edit := ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods"}, readOnly), rule(nil, core, []string{"secrets"}, []string{"get", "create"})}}
	admin := ClusterRole{Rules: []Rule{rule(nil, anyGroup, []string{"*"}, []string{"*"})}}
	urls := func(verbs []string, u ...string) ClusterRole {
		return ClusterRole{Rules: []Rule{{NonResourceURLs: u, Verbs: verbs}}}
	}
	cases := []struct {
		reason string
		ref    ClusterRoleRef
		role   ClusterRole
		code   RefusalCode
		want   string
	}{
		{reason: "a pod reader cluster-wide", ref: ClusterRoleRef{Name: "reader"}, role: view},
		{reason: "a role with Secrets bound in the ServiceAccount's namespace", ref: ClusterRoleRef{Name: "edit", Namespaces: teamA}, role: edit},
		{reason: "a role with Secrets bound in a system namespace", ref: ClusterRoleRef{Name: "edit", Namespaces: kymaSystem}, role: edit,
			code: CodeCredentialsSystemNamespace, want: "ClusterRole edit rule 1"},
		{reason: "a role with Secrets bound cluster-wide", ref: ClusterRoleRef{Name: "edit"}, role: edit, code: CodeCredentialsClusterWide, want: "ClusterRole edit rule 1"},
		{reason: "cluster-admin, even in one namespace", ref: ClusterRoleRef{Name: "cluster-admin", Namespaces: teamA}, role: admin,
			code: CodeEverything, want: "ClusterRole cluster-admin rule 0"},
		{reason: "*/token bound in kube-system", ref: ClusterRoleRef{Name: "minter", Namespaces: kubeSystem},
			role: ClusterRole{Rules: []Rule{rule(nil, core, []string{"*/token"}, []string{"create"})}}, code: CodeCredentialsSystemNamespace, want: "ClusterRole minter rule 0"},
		{reason: "a role that creates pods bound in kube-system", ref: ClusterRoleRef{Name: "runner", Namespaces: kubeSystem},
			role: ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods"}, []string{"create"})}}, code: CodeWorkloadsSystemNamespace, want: "ClusterRole runner rule 0"},
		{reason: "a role with pods/exec bound cluster-wide", ref: ClusterRoleRef{Name: "shell"},
			role: ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods/exec"}, []string{"create"})}}, code: CodeWorkloadsClusterWide, want: "ClusterRole shell rule 0"},
		{reason: "a role that writes deployments bound in the ServiceAccount's namespace", ref: ClusterRoleRef{Name: "deployer", Namespaces: teamA},
			role: ClusterRole{Rules: []Rule{rule(nil, []string{"apps"}, []string{"deployments"}, []string{"create", "update", "patch"})}}},
		{reason: "an aggregated ClusterRole, whatever its rules are now", ref: ClusterRoleRef{Name: "view", Namespaces: teamA},
			role: ClusterRole{Rules: view.Rules, Aggregated: true}, code: CodeAggregatedClusterRole, want: "ClusterRole view is aggregated"},
		{reason: "an aggregated ClusterRole without rules yet", ref: ClusterRoleRef{Name: "grows"}, role: ClusterRole{Aggregated: true},
			code: CodeAggregatedClusterRole, want: "ClusterRole grows is aggregated"},
		{reason: "reading health and discovery URLs", ref: ClusterRoleRef{Name: "discovery"}, role: urls([]string{"get", "head"}, "/healthz", "/version", "/api", "/api/*", "/openapi/*")},
		{reason: "every non-resource URL", ref: ClusterRoleRef{Name: "urls"}, role: urls([]string{"get"}, "*"), code: CodeNonResourceURL, want: "ClusterRole urls rule 0"},
		{reason: "a prefix that reaches the API server's logs", ref: ClusterRoleRef{Name: "urls"}, role: urls([]string{"get"}, "/healthz", "/l*"),
			code: CodeNonResourceURL, want: "ClusterRole urls rule 0"},
		{reason: "a debug endpoint", ref: ClusterRoleRef{Name: "urls"}, role: urls([]string{"get"}, "/debug/pprof/heap"), code: CodeNonResourceURL, want: "ClusterRole urls rule 0"},
		{reason: "writing a non-resource URL", ref: ClusterRoleRef{Name: "urls"}, role: urls([]string{"get", "put"}, "/healthz"), code: CodeNonResourceURL, want: "ClusterRole urls rule 0"},
		{reason: "wildcard verbs on a non-resource URL", ref: ClusterRoleRef{Name: "urls"}, role: urls([]string{"*"}, "/healthz"), code: CodeNonResourceURL, want: "ClusterRole urls rule 0"},
		{reason: "non-resource URLs bound in a namespace grant nothing", ref: ClusterRoleRef{Name: "urls", Namespaces: teamA}, role: urls([]string{"*"}, "*")},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			req := requestIn("team-a")
			req.ClusterRole = &tc.ref
			err := AccessPolicy{}.CheckClusterRole(req, tc.role)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkRefusal(t, err, ErrEscalation, "spec.clusterRole", tc.code, "spec.clusterRole: "+tc.want)
		})
	}
	if err := (AccessPolicy{}).CheckRequest(func() Request { r := request(); r.ClusterRole = &ClusterRoleRef{Name: "view"}; return r }()); err != nil {
		t.Errorf("a request with only a ClusterRole: %v", err)
	}
}
