package usecase_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
)

// secretsIn is a rule that reads Secrets in ns.
func secretsIn(ns string) sakubeconfig.Rule {
	return sakubeconfig.Rule{Namespaces: []string{ns}, APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}
}

// TestIdentityCredentialsOnlyInNamespacesCreatedForTheRequest walks the sequence of a namespace the request
// reaches Secrets in: one that existed before is refused before anything is written (istio-system with istiod's
// token); a missing one is created for the request and stays the request's over re-runs; deleted and created again
// by someone else, the next apply refuses and revokes; another request cannot claim it; the landscape may share an
// existing one.
func TestIdentityCredentialsOnlyInNamespacesCreatedForTheRequest(t *testing.T) {
	w := newIdentityWorld(t, time.Hour, secretsIn("istio-system"))
	w.req.ServiceAccount.Namespace = "istio-system"
	w.ids.PutNamespace(w.rt, "istio-system")
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !strings.HasPrefix(res.Message, "spec.rules[0]: ") || !strings.Contains(res.Message, "existed before") || !strings.Contains(res.Message, "sharedNamespaces") {
		t.Errorf("message %q", res.Message)
	}
	if len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.ids.TokenRequests() != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
		t.Fatal("a request for an existing namespace's Secrets got a ServiceAccount, a token or a Secret")
	}

	// The landscape shares istio-system: allowed.
	w.uc.Access = sakubeconfig.AccessPolicy{SharedNamespaces: []string{"istio-system"}}
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
	w.uc.Access = sakubeconfig.AccessPolicy{}
	w.req.Generation++
	wantReason(t, w.reconcile(), sakubeconfig.ReasonEscalationRefused)
	if len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
		t.Fatal("sharing withdrawn: the request keeps its objects or Secret")
	}

	// A namespace that does not exist is created for the request, and stays its own over re-runs.
	w.req.Generation++
	w.req.ServiceAccount.Namespace, w.req.Rules = "team-new", []sakubeconfig.Rule{secretsIn("team-new")}
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
	w.req.Generation++
	w.req.Rules = append(w.req.Rules, sakubeconfig.Rule{Namespaces: []string{"team-new"}, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}})
	wantReason(t, w.reconcile(), sakubeconfig.ReasonRulesApplied)
	w.clock.Step(50 * time.Minute)
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigRotated)

	// Another request cannot claim it.
	other := newIdentityWorld(t, time.Hour, secretsIn("team-new"))
	other.ids, other.rt = w.ids, w.rt
	other.req.Owner.Name, other.req.ServiceAccount.Namespace, other.req.SecretName = "other", "team-new", "other-kubeconfig"
	other.req.ServiceAccount.Name = "other"
	other.uc.Runtimes = w.ids
	if res := other.reconcile(); res.Reason != sakubeconfig.ReasonEscalationRefused || !strings.Contains(res.Message, "was created for ServiceAccountKubeconfig kcp-system/lifecycle-manager-rid") {
		t.Errorf("another request: %s %q", res.Reason, res.Message)
	}

	// Deleted and created again by someone else: the next apply refuses and revokes.
	token := w.token()
	w.ids.PutNamespace(w.rt, "team-new")
	w.clock.Step(50 * time.Minute)
	res = w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !strings.Contains(res.Message, `namespace "team-new"`) || len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
		t.Errorf("re-created namespace: %q, objects %v", res.Message, w.ids.Objects(w.rt, w.req.Owner))
	}
	if _, err := w.ids.WhoAmI(w.rt, token); err == nil {
		t.Error("the token of the refused request still authenticates")
	}
}

// TestIdentityBoundRoleClaimsItsNamespaces: a bound ClusterRole that reaches workloads claims the namespaces it is
// bound in, at the first apply and when it grows into them later (the periodic check asks the runtime).
func TestIdentityBoundRoleClaimsItsNamespaces(t *testing.T) {
	runner := sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: "runner"}
	pods := []sakubeconfig.Rule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}
	w := newIdentityWorld(t, 24*time.Hour)
	w.ids.PutNamespace(w.rt, "team-a")
	w.ids.Put(w.rt, runner, nil, nil, pods)
	w.req.ServiceAccount.Namespace = "team-a"
	w.req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: "runner", Namespaces: []string{"team-a"}}
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonKubeconfigIssued)

	w.ids.Put(w.rt, runner, nil, nil, append(pods, sakubeconfig.Rule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}}))
	w.clock.Step(res.RequeueAfter)
	res = w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !strings.HasPrefix(res.Message, "spec.clusterRole: ") || !strings.Contains(res.Message, "workloads") || !strings.Contains(res.Message, "existed before") {
		t.Errorf("message %q", res.Message)
	}
	if len(w.ids.Objects(w.rt, w.req.Owner)) != 0 {
		t.Errorf("revoked request holds %v", w.ids.Objects(w.rt, w.req.Owner))
	}
}
