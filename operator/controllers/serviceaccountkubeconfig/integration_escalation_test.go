package serviceaccountkubeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/test/testenv"
)

// refusedShape is a request the policy refuses, with the dangerous request the real authorizer would grant it.
type refusedShape struct {
	name        string
	saNamespace string
	rules       []imv1.AccessRule
	// clusterRole is bound instead (cluster-wide, or in bindIn).
	clusterRole *rbacv1.ClusterRole
	bindIn      []string
	// dangerous is what the rules grant: a credential of kube-system, impersonation, the API server's logs, a Pod
	// or a shell in a system namespace.
	dangerous authorizationv1.SubjectAccessReviewSpec
	// admission: CEL refuses the object already; otherwise the operator does, with Ready reason EscalationRefused.
	admission bool
	code      sakubeconfig.RefusalCode
}

// Phrases of the refusal messages per code: what people and alerts read next to the stable Ready reason.
var refusalPhrase = map[sakubeconfig.RefusalCode]string{
	sakubeconfig.CodeCredentialsClusterWide:       "cluster-wide are refused",
	sakubeconfig.CodeCredentialsSystemNamespace:   "in system namespace",
	sakubeconfig.CodeCredentialsOtherNamespace:    "outside the ServiceAccount's namespace",
	sakubeconfig.CodeEscalatingVerb:               "include impersonate",
	sakubeconfig.CodeAggregatedClusterRole:        "is aggregated",
	sakubeconfig.CodeNonResourceURL:               "non-resource URLs",
	sakubeconfig.CodeWorkloadsSystemNamespace:     "in system namespace",
	sakubeconfig.CodeWorkloadsClusterWide:         "cluster-wide are refused",
	sakubeconfig.CodeWorkloadsOtherNamespace:      "outside the ServiceAccount's namespace",
	sakubeconfig.CodePowerNodes:                   "reach NodePowers, which is refused",
	sakubeconfig.CodePowerAdmission:               "reach AdmissionControl, which is refused",
	sakubeconfig.CodePowerCertificateSigning:      "reach CertificateSigning, which is refused",
	sakubeconfig.CodePowerAPIRegistration:         "reach APIRegistration, which is refused",
	sakubeconfig.CodePowerPersistentVolumes:       "reach PersistentVolumeCreation, which is refused",
	sakubeconfig.CodePowerNamespaces:              "reach NamespaceWrites, which is refused",
	sakubeconfig.CodeCredentialsExistingNamespace: "existed before the request",
	sakubeconfig.CodeWorkloadsExistingNamespace:   "existed before the request",
}

// attrs is a resource request as a SubjectAccessReview asks it.
func attrs(ns, verb, group, resource, subresource, name string) authorizationv1.SubjectAccessReviewSpec {
	return authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
		Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource, Name: name}}
}

// powerShapes are the cluster powers and the claims of namespaces that existed before the request (team-a, which
// the test creates first as a customer would): each refused by the operator's policy by default.
func powerShapes() []refusedShape {
	core := []string{""}
	rule := func(ns []string, group, resource, verb string) []imv1.AccessRule {
		return []imv1.AccessRule{{Namespaces: ns, APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}}}
	}
	return []refusedShape{
		{name: "nodes/proxy get cluster-wide: kubelet exec on every node", saNamespace: "team-p", code: sakubeconfig.CodePowerNodes,
			rules: rule(nil, "", "nodes/proxy", "get"), dangerous: attrs("", "get", "", "nodes", "proxy", "any-node")},
		{name: "*/proxy get cluster-wide includes nodes/proxy", saNamespace: "team-p", code: sakubeconfig.CodePowerNodes,
			rules: []imv1.AccessRule{{APIGroups: core, Resources: []string{"*/proxy"}, Verbs: []string{"get"}}}, dangerous: attrs("", "get", "", "nodes", "proxy", "any-node")},
		{name: "patch nodes", saNamespace: "team-p", code: sakubeconfig.CodePowerNodes,
			rules: rule(nil, "", "nodes", "patch"), dangerous: attrs("", "patch", "", "nodes", "", "any-node")},
		{name: "create mutatingwebhookconfigurations", saNamespace: "team-p", code: sakubeconfig.CodePowerAdmission,
			rules: rule(nil, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "create"), dangerous: attrs("", "create", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "")},
		{name: "delete validatingadmissionpolicybindings", saNamespace: "team-p", code: sakubeconfig.CodePowerAdmission,
			rules: rule(nil, "admissionregistration.k8s.io", "validatingadmissionpolicybindings", "delete"), dangerous: attrs("", "delete", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", "", "guard")},
		{name: "approve on signers", saNamespace: "team-p", code: sakubeconfig.CodePowerCertificateSigning,
			rules: rule(nil, "certificates.k8s.io", "signers", "approve"), dangerous: attrs("", "approve", "certificates.k8s.io", "signers", "", "kubernetes.io/kube-apiserver-client")},
		{name: "update certificatesigningrequests/approval", saNamespace: "team-p", code: sakubeconfig.CodePowerCertificateSigning,
			rules: rule(nil, "certificates.k8s.io", "certificatesigningrequests/approval", "update"), dangerous: attrs("", "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "csr-1")},
		{name: "create apiservices", saNamespace: "team-p", code: sakubeconfig.CodePowerAPIRegistration,
			rules: rule(nil, "apiregistration.k8s.io", "apiservices", "create"), dangerous: attrs("", "create", "apiregistration.k8s.io", "apiservices", "", "")},
		{name: "update customresourcedefinitions", saNamespace: "team-p", code: sakubeconfig.CodePowerAPIRegistration,
			rules: rule(nil, "apiextensions.k8s.io", "customresourcedefinitions", "update"), dangerous: attrs("", "update", "apiextensions.k8s.io", "customresourcedefinitions", "", "runtimes.infrastructuremanager.kyma-project.io")},
		{name: "create persistentvolumes", saNamespace: "team-p", code: sakubeconfig.CodePowerPersistentVolumes,
			rules: rule(nil, "", "persistentvolumes", "create"), dangerous: attrs("", "create", "", "persistentvolumes", "", "")},
		{name: "patch its namespace through a Role", saNamespace: "team-a", code: sakubeconfig.CodePowerNamespaces,
			rules: rule([]string{"team-a"}, "", "namespaces", "patch"), dangerous: attrs("team-a", "patch", "", "namespaces", "", "team-a")},
		{name: "Secrets in its own namespace that existed before", saNamespace: "team-a", code: sakubeconfig.CodeCredentialsExistingNamespace,
			rules: rule([]string{"team-a"}, "", "secrets", "get"), dangerous: secretsIn("team-a")},
		{name: "deployments in its own namespace that existed before", saNamespace: "team-a", code: sakubeconfig.CodeWorkloadsExistingNamespace,
			rules: rule([]string{"team-a"}, "apps", "deployments", "create"), dangerous: attrs("team-a", "create", "apps", "deployments", "", "")},
	}
}

func tokenOfKubeSystem() authorizationv1.SubjectAccessReviewSpec {
	return authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
		Namespace: "kube-system", Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "generic-garbage-collector"}}
}

func secretsIn(ns string) authorizationv1.SubjectAccessReviewSpec {
	return authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
		Namespace: ns, Verb: "get", Resource: "secrets", Name: "any"}}
}

// podsRequest is a request on pods (or one of their subresources) in ns, as the API server authorizes a kubectl run or
// exec there.
func podsRequest(ns, verb, subresource string) authorizationv1.SubjectAccessReviewSpec {
	return authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
		Namespace: ns, Verb: verb, Resource: "pods", Subresource: subresource}}
}

func refusedShapes() []refusedShape {
	core := []string{""}
	return []refusedShape{
		{name: "subresource wildcard */token cluster-wide", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeCredentialsClusterWide,
			rules:     []imv1.AccessRule{{APIGroups: core, Resources: []string{"*/token"}, Verbs: []string{"create"}}},
			dangerous: tokenOfKubeSystem()},
		{name: "serviceaccounts/token create in kube-system", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeCredentialsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kube-system"}, APIGroups: core, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}}},
			dangerous: tokenOfKubeSystem()},
		{name: "wildcard verbs on serviceaccounts/token in kube-system", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeCredentialsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kube-system"}, APIGroups: core, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"*"}}},
			dangerous: tokenOfKubeSystem()},
		{name: "Secrets in kube-system", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeCredentialsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kube-system"}, APIGroups: core, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
			dangerous: secretsIn("kube-system")},
		{name: "*/scopes impersonates userextras", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeEscalatingVerb,
			rules: []imv1.AccessRule{{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*/scopes"}, Verbs: []string{"*"}}},
			dangerous: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "impersonate", Group: "authentication.k8s.io", Resource: "userextras", Subresource: "scopes", Name: "cluster-admin"}}},
		{name: "Secrets in the ServiceAccount's own namespace, a system namespace", saNamespace: "kyma-system", code: sakubeconfig.CodeCredentialsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kyma-system"}, APIGroups: core, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
			dangerous: secretsIn("kyma-system")},
		{name: "*/token in kube-public", saNamespace: "team-a", code: sakubeconfig.CodeCredentialsSystemNamespace,
			rules: []imv1.AccessRule{{Namespaces: []string{"kube-public"}, APIGroups: []string{"*"}, Resources: []string{"*/token"}, Verbs: []string{"create"}}},
			dangerous: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "kube-public", Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "default"}}},
		{name: "Secrets in another namespace", saNamespace: "team-a", code: sakubeconfig.CodeCredentialsOtherNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"team-b"}, APIGroups: core, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
			dangerous: secretsIn("team-b")},
		{name: "create pods in kube-system: a Pod may run as a controller's ServiceAccount", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeWorkloadsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kube-system"}, APIGroups: core, Resources: []string{"pods"}, Verbs: []string{"create"}}},
			dangerous: podsRequest("kube-system", "create", "")},
		{name: "create pods/exec in kube-system: a shell in a controller's Pod", saNamespace: "team-a", admission: true, code: sakubeconfig.CodeWorkloadsSystemNamespace,
			rules:     []imv1.AccessRule{{Namespaces: []string{"kube-system"}, APIGroups: core, Resources: []string{"pods/exec"}, Verbs: []string{"create"}}},
			dangerous: podsRequest("kube-system", "create", "exec")},
		{name: "create deployments in the ServiceAccount's own namespace, a system namespace", saNamespace: "kyma-system", code: sakubeconfig.CodeWorkloadsSystemNamespace,
			rules: []imv1.AccessRule{{Namespaces: []string{"kyma-system"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}}},
			dangerous: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "kyma-system", Verb: "create", Group: "apps", Resource: "deployments"}}},
		{name: "a bound ClusterRole with get on pods/exec (a WebSocket exec), in kube-system", saNamespace: "team-a", code: sakubeconfig.CodeWorkloadsSystemNamespace, bindIn: []string{"kube-system"},
			clusterRole: &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{APIGroups: core, Resources: []string{"pods/exec"}, Verbs: []string{"get"}}}},
			dangerous:   podsRequest("kube-system", "get", "exec")},
		{name: "a bound ClusterRole with every non-resource URL", saNamespace: "team-a", code: sakubeconfig.CodeNonResourceURL,
			clusterRole: &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}}}},
			dangerous:   authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/logs/kube-apiserver.log", Verb: "get"}}},
		{name: "a bound ClusterRole with */token, in kube-system", saNamespace: "team-a", code: sakubeconfig.CodeCredentialsSystemNamespace, bindIn: []string{"kube-system"},
			clusterRole: &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{APIGroups: core, Resources: []string{"*/token"}, Verbs: []string{"create"}}}},
			dangerous:   tokenOfKubeSystem()},
		{name: "a bound aggregated ClusterRole (the test plays the aggregation controller)", saNamespace: "team-a", code: sakubeconfig.CodeAggregatedClusterRole,
			clusterRole: &rbacv1.ClusterRole{
				AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"test.kim/aggregate": "true"}}}},
				Rules:           []rbacv1.PolicyRule{{APIGroups: core, Resources: []string{"secrets"}, Verbs: []string{"get"}}}},
			dangerous: secretsIn("kube-system")},
	}
}

// refusedShapesOnTheRealAuthorizer proves each refused shape against the runtime's real RBAC authorizer: bound
// directly (with admin) to a probe ServiceAccount, a SubjectAccessReview shows it grants the dangerous request; as
// a ServiceAccountKubeconfig it is refused, by admission or by the operator with the Ready reason
// EscalationRefused, and the operator creates nothing in the runtime.
func (sc *scenario) refusedShapesOnTheRealAuthorizer(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	admin := w.runtimeAdmin(t, shootName)
	for _, ns := range []string{"team-a", "team-b", "team-p", "kube-public"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// The authorizer is RBAC's: an unbound ServiceAccount is denied what the shapes below are granted.
	if got := review(t, admin, "team-a", "nobody", tokenOfKubeSystem()); got.Allowed {
		t.Fatalf("an unbound ServiceAccount may mint kube-system tokens: %+v (the runtime API server does not authorize with RBAC)", got)
	}
	policy := sakubeconfig.AccessPolicy{} // the test operator's landscape configuration: the defaults
	for i, sh := range append(refusedShapes(), powerShapes()...) {
		t.Run(sh.name, func(t *testing.T) {
			probe := fmt.Sprintf("probe-%d", i)
			cleanup := grant(t, admin, sh, probe)
			defer cleanup()
			testenv.Eventually(t, 10*time.Second, "the real authorizer grants the dangerous request", func() (bool, string) {
				got := review(t, admin, sh.saNamespace, probe, sh.dangerous)
				return got.Allowed && strings.Contains(got.Reason, "RBAC: allowed by"), fmt.Sprintf("%+v", got)
			})

			name := fmt.Sprintf("shape-%d", i)
			obj := request(name+"-"+runtimeID, name+"-kubeconfig", sh.saNamespace, name, time.Hour, sh.rules...)
			if sh.clusterRole != nil {
				obj.Spec.ClusterRole = &imv1.ClusterRoleReference{Name: sh.clusterRole.Name, Namespaces: sh.bindIn}
			}
			if sh.admission {
				err := w.kcp.Create(ctx, obj)
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.rules[0]") {
					t.Errorf("create: %v, want a rejection naming spec.rules[0]", err)
				}
				// Admission mirrors the operator's policy, which refuses it as well.
				var ref *sakubeconfig.Refusal
				if err := policy.CheckRequest(serviceaccountkubeconfig.Request(obj)); !errors.As(err, &ref) || ref.Code != sh.code {
					t.Errorf("the operator's policy: %v, want a refusal %s", err, sh.code)
				}
				return
			}
			if err := w.kcp.Create(ctx, obj); err != nil {
				t.Fatalf("rejected at admission: %v", err)
			}
			testenv.Eventually(t, time.Minute, "refused by the operator", func() (bool, string) {
				s := w.get(t, obj.Name)
				return readyReason(s) == sakubeconfig.ReasonEscalationRefused && s.Status.ObservedGeneration == s.Generation, readyMessage(s)
			})
			s := w.get(t, obj.Name)
			field := "spec.rules[0]: "
			if sh.clusterRole != nil {
				field = "spec.clusterRole: "
			}
			if msg := readyMessage(s); !strings.HasPrefix(msg, field) || !strings.Contains(msg, refusalPhrase[sh.code]) {
				t.Errorf("message %q, want %s... %q", msg, field, refusalPhrase[sh.code])
			}
			if c := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != sakubeconfig.ReasonEscalationRefused {
				t.Errorf("kstatus Stalled %+v, want True with EscalationRefused", c)
			}
			if s.Status.State != imv1.ServiceAccountKubeconfigStateError || len(s.Status.RuntimeObjects) != 0 || w.secret(t, obj.Spec.SecretName) != nil {
				t.Errorf("refused request: state %s, runtime objects %v, or a Secret", s.Status.State, s.Status.RuntimeObjects)
			}
			if _, err := admin.CoreV1().ServiceAccounts(sh.saNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the refused request's ServiceAccount: %v, want NotFound", err)
			}
			if err := w.kcp.Delete(ctx, obj); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, time.Minute, "the refused request gone", func() (bool, string) { return w.get(t, obj.Name) == nil, "" })
		})
	}
}

// grownRoleIsRevoked binds a harmless ClusterRole cluster-wide, lets it grow */token (as a customer with admin
// could), and shows that the periodic check revokes the request although no token is due: the ServiceAccount
// the real authorizer would now let mint kube-system's tokens is gone.
func (sc *scenario) grownRoleIsRevoked(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	admin := w.runtimeAdmin(t, shootName)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "kim-test-grows"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}
	role, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) }()
	obj := request("grows-"+runtimeID, "grows-kubeconfig", "team-a", "grows", 24*time.Hour)
	obj.Spec.ClusterRole = &imv1.ClusterRoleReference{Name: role.Name}
	if err := w.kcp.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.kcp.Delete(ctx, obj) }()
	testenv.Eventually(t, time.Minute, "Ready", func() (bool, string) { return ready(w.get(t, obj.Name)) })
	tokens, _ := w.tokenRequests(t, shootName)

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*/token"}, Verbs: []string{"create"}})
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the grown role grants kube-system's tokens to the request's ServiceAccount", func() (bool, string) {
		got := review(t, admin, "team-a", "grows", tokenOfKubeSystem())
		return got.Allowed, fmt.Sprintf("%+v", got)
	})
	// The periodic check is due after at most 10 minutes on the operator's clock; the 24h token is not. A touch
	// makes the operator look now.
	w.clock.Step(11 * time.Minute)
	touch(t, w, obj.Name)
	testenv.Eventually(t, time.Minute, "revoked", func() (bool, string) {
		s := w.get(t, obj.Name)
		return readyReason(s) == sakubeconfig.ReasonEscalationRefused && len(s.Status.RuntimeObjects) == 0, readyMessage(s)
	})
	if msg := readyMessage(w.get(t, obj.Name)); !strings.Contains(msg, "*/token") || !strings.Contains(msg, refusalPhrase[sakubeconfig.CodeCredentialsClusterWide]) {
		t.Errorf("message %q", msg)
	}
	if _, err := admin.CoreV1().ServiceAccounts("team-a").Get(ctx, "grows", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the revoked request's ServiceAccount: %v, want NotFound", err)
	}
	if got := review(t, admin, "team-a", "grows", tokenOfKubeSystem()); got.Allowed {
		t.Errorf("after the revocation the authorizer still grants: %+v", got)
	}
	if w.secret(t, obj.Spec.SecretName) != nil {
		t.Error("the revoked request's Secret is left")
	}
	if now, _ := w.tokenRequests(t, shootName); now != tokens {
		t.Errorf("%d TokenRequests after the role grew, want none", now-tokens)
	}
}

// grant creates the ServiceAccount probe in sh.saNamespace and binds sh's rules or ClusterRole to it as the
// operator would, with the runtime's admin. It returns the cleanup.
func grant(t *testing.T, admin kubernetes.Interface, sh refusedShape, probe string) func() {
	t.Helper()
	ctx := context.Background()
	var undo []func()
	must := func(err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sh.saNamespace, Name: probe}}
	_, err := admin.CoreV1().ServiceAccounts(sh.saNamespace).Create(ctx, sa, metav1.CreateOptions{})
	must(err)
	undo = append(undo, func() { _ = admin.CoreV1().ServiceAccounts(sh.saNamespace).Delete(ctx, probe, metav1.DeleteOptions{}) })
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sh.saNamespace, Name: probe}}
	bind := func(roleKind, roleName string, namespaces []string) {
		name := "kim-test-" + probe
		if len(namespaces) == 0 {
			_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: roleName}, Subjects: subjects}, metav1.CreateOptions{})
			must(err)
			undo = append(undo, func() { _ = admin.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })
		}
		for _, ns := range namespaces {
			_, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: roleName}, Subjects: subjects}, metav1.CreateOptions{})
			must(err)
			undo = append(undo, func() { _ = admin.RbacV1().RoleBindings(ns).Delete(ctx, name, metav1.DeleteOptions{}) })
		}
	}
	if cr := sh.clusterRole; cr != nil {
		cr.Name = "kim-test-" + probe
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{})
		must(err)
		undo = append(undo, func() { _ = admin.RbacV1().ClusterRoles().Delete(ctx, cr.Name, metav1.DeleteOptions{}) })
		bind("ClusterRole", cr.Name, sh.bindIn)
	}
	for j, r := range sh.rules {
		name := fmt.Sprintf("kim-test-%s-%d", probe, j)
		rule := rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames, Verbs: r.Verbs}
		if len(r.Namespaces) == 0 {
			_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
			must(err)
			undo = append(undo, func() { _ = admin.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}) })
			bind("ClusterRole", name, nil)
		}
		for _, ns := range r.Namespaces {
			_, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
			must(err)
			undo = append(undo, func() { _ = admin.RbacV1().Roles(ns).Delete(ctx, name, metav1.DeleteOptions{}) })
			bind("Role", name, []string{ns})
		}
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// review asks the runtime's authorizer whether ServiceAccount ns/name may do spec's request.
func review(t *testing.T, admin kubernetes.Interface, ns, name string, spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
	t.Helper()
	spec.User = "system:serviceaccount:" + ns + ":" + name
	spec.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return got.Status
}
