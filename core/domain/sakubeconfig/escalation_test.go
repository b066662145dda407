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

func TestCheckRequest(t *testing.T) {
	cases := []struct {
		reason  string
		req     Request
		policy  AccessPolicy
		want    error
		field   string
		mention string
	}{
		{reason: "get/list pods in kyma-system", req: request(rule(kymaSystem, core, []string{"pods"}, []string{"get", "list"}))},
		{reason: "read-only on everything in one namespace, Secrets included", req: request(rule(kymaSystem, anyGroup, []string{"*"}, readOnly))},
		{reason: "cluster-wide read of pods", req: request(rule(nil, core, []string{"pods"}, readOnly))},
		{reason: "a second rule escalates: named by index", want: ErrEscalation, field: "spec.rules[1]", mention: `"escalate"`,
			req: request(rule(kymaSystem, core, []string{"pods"}, readOnly), rule(nil, rbacGroup, []string{"clusterroles"}, []string{"escalate"}))},
		{reason: "bind", want: ErrEscalation, field: "spec.rules[0]", mention: `"bind"`,
			req: request(rule(kymaSystem, rbacGroup, []string{"rolebindings", "roles"}, []string{"create", "bind"}))},
		{reason: "impersonate, in any case", want: ErrEscalation, field: "spec.rules[0]", mention: `"Impersonate"`,
			req: request(rule(nil, core, []string{"users"}, []string{"Impersonate"}))},
		{reason: "wildcard verbs on wildcard resources, even in one namespace", want: ErrEscalation, field: "spec.rules[0]", mention: "wildcard verbs on wildcard resources",
			req: request(rule(kymaSystem, core, []string{"*"}, []string{"*"}))},
		{reason: "wildcard verbs on roles include escalate", want: ErrEscalation, field: "spec.rules[0]", mention: "escalate and bind",
			req: request(rule(kymaSystem, rbacGroup, []string{"roles"}, []string{"*"}))},
		{reason: "wildcard verbs on clusterroles in any group", want: ErrEscalation, field: "spec.rules[0]", mention: "escalate and bind",
			req: request(rule(nil, anyGroup, []string{"clusterroles"}, []string{"*"}))},
		{reason: "wildcard verbs on rolebindings are not escalate or bind (RBAC checks bindings itself)",
			req: request(rule(kymaSystem, rbacGroup, []string{"rolebindings"}, []string{"*"}))},
		{reason: "wildcard verbs on serviceaccounts include impersonate", want: ErrEscalation, field: "spec.rules[0]", mention: "impersonate",
			req: request(rule(kymaSystem, core, []string{"serviceaccounts"}, []string{"*"}))},
		{reason: "wildcard verbs on userextras subresources include impersonate", want: ErrEscalation, field: "spec.rules[0]", mention: "impersonate",
			req: request(rule(nil, []string{"authentication.k8s.io"}, []string{"userextras/scopes"}, []string{"*"}))},
		{reason: "wildcard verbs on deployments are fine", req: request(rule(kymaSystem, []string{"apps"}, []string{"deployments"}, []string{"*"}))},
		{reason: "Secrets cluster-wide", want: ErrEscalation, field: "spec.rules[0]", mention: "clusterWideSecretsNamespaces",
			req: request(rule(nil, core, []string{"secrets"}, []string{"get"}))},
		{reason: "everything cluster-wide includes Secrets", want: ErrEscalation, field: "spec.rules[0]", mention: "Secrets",
			req: request(rule(nil, anyGroup, []string{"*"}, readOnly))},
		{reason: "tokens of any ServiceAccount cluster-wide", want: ErrEscalation, field: "spec.rules[0]", mention: "ServiceAccount tokens",
			req: request(rule(nil, core, []string{"serviceaccounts/token"}, []string{"create"}))},
		{reason: "Secrets in named namespaces", req: request(rule([]string{"kyma-system", "istio-system"}, core, []string{"secrets"}, readOnly))},
		{reason: "secrets of another API group are not Secrets", req: request(rule(nil, []string{"example.com"}, []string{"secrets"}, readOnly))},
		{reason: "Secrets cluster-wide for an allowed KCP namespace", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			req: request(rule(nil, core, []string{"secrets"}, readOnly))},
		{reason: "the allowance is for Secrets only, not for escalate", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}},
			want: ErrEscalation, field: "spec.rules[0]", req: request(rule(nil, rbacGroup, []string{"roles"}, []string{"escalate"}))},
		{reason: "another KCP namespace's allowance does not count", policy: AccessPolicy{ClusterWideSecretsNamespaces: []string{"other"}},
			want: ErrEscalation, field: "spec.rules[0]", req: request(rule(nil, core, []string{"secrets"}, readOnly))},
		{reason: "no rules and no ClusterRole", want: ErrInvalid, field: "spec", req: request()},
		{reason: "validity below the TokenRequest minimum", want: ErrInvalid, field: "spec.validity",
			req: func() Request {
				r := request(rule(kymaSystem, core, []string{"pods"}, readOnly))
				r.Validity = time.Minute
				return r
			}()},
		{reason: "a rule without verbs", want: ErrInvalid, field: "spec.rules[0]", req: request(rule(kymaSystem, core, []string{"pods"}, nil))},
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
			var ref *Refusal
			if !errors.Is(err, tc.want) || !errors.As(err, &ref) {
				t.Fatalf("err = %v, want a refusal wrapping %v", err, tc.want)
			}
			if ref.Field != tc.field || !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("refusal names %q (%v), want %q", ref.Field, err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("refusal %q does not mention %q", err, tc.mention)
			}
		})
	}
}

func TestCheckClusterRole(t *testing.T) {
	view := []Rule{rule(nil, core, []string{"pods", "configmaps"}, readOnly)}
	edit := []Rule{rule(nil, core, []string{"pods"}, readOnly), rule(nil, core, []string{"secrets"}, []string{"get", "create"})}
	admin := []Rule{rule(nil, anyGroup, []string{"*"}, []string{"*"})}
	cases := []struct {
		reason string
		ref    ClusterRoleRef
		rules  []Rule
		want   string
	}{
		{reason: "view cluster-wide", ref: ClusterRoleRef{Name: "view"}, rules: view},
		{reason: "a role with Secrets bound in namespaces", ref: ClusterRoleRef{Name: "edit", Namespaces: kymaSystem}, rules: edit},
		{reason: "a role with Secrets bound cluster-wide", ref: ClusterRoleRef{Name: "edit"}, rules: edit, want: "ClusterRole edit rule 1"},
		{reason: "cluster-admin, even in one namespace", ref: ClusterRoleRef{Name: "cluster-admin", Namespaces: kymaSystem}, rules: admin,
			want: "ClusterRole cluster-admin rule 0"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			req := request()
			req.ClusterRole = &tc.ref
			err := AccessPolicy{}.CheckClusterRole(req, tc.rules)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrEscalation) || !strings.HasPrefix(err.Error(), "spec.clusterRole: "+tc.want) {
				t.Errorf("err = %v, want an escalation refusal of %s", err, tc.want)
			}
		})
	}
	if err := (AccessPolicy{}).CheckRequest(func() Request { r := request(); r.ClusterRole = &ClusterRoleRef{Name: "view"}; return r }()); err != nil {
		t.Errorf("a request with only a ClusterRole: %v", err)
	}
}
