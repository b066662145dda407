package sakubeconfig

import (
	"errors"
	"slices"
	"testing"
)

// TestNamespaceClaims: every namespace in which a rule or the bound ClusterRole reaches Secrets, tokens or workloads
// is claimed once, by the first part of the request that reaches it, with the code of its class; shared namespaces
// and rules that reach neither claim nothing.
func TestNamespaceClaims(t *testing.T) {
	req := requestIn("team-a",
		rule(teamA, core, []string{"pods"}, readOnly),
		rule([]string{"team-a", "team-b"}, core, []string{"secrets"}, readOnly),
		rule([]string{"team-b", "team-c"}, []string{"apps"}, []string{"deployments"}, []string{"create"}),
		rule([]string{"shared"}, core, []string{"serviceaccounts/token"}, []string{"create"}))
	req.ClusterRole = &ClusterRoleRef{Name: "runner", Namespaces: []string{"team-a", "team-d"}}
	role := &ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods/exec"}, []string{"create"})}}
	got := AccessPolicy{SharedNamespaces: []string{"shared"}}.NamespaceClaims(req, role)
	want := []NamespaceClaim{
		{Namespace: "team-a", Field: "spec.rules[1]", Code: CodeCredentialsExistingNamespace},
		{Namespace: "team-b", Field: "spec.rules[1]", Code: CodeCredentialsExistingNamespace},
		{Namespace: "team-c", Field: "spec.rules[2]", Code: CodeWorkloadsExistingNamespace},
		{Namespace: "team-d", Field: "spec.clusterRole", Code: CodeWorkloadsExistingNamespace},
	}
	if len(got) != len(want) {
		t.Fatalf("claims %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Namespace != want[i].Namespace || got[i].Field != want[i].Field || got[i].Code != want[i].Code || got[i].What == "" {
			t.Errorf("claim %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if names := ClaimedNamespaces(got); !slices.Equal(names, []string{"team-a", "team-b", "team-c", "team-d"}) {
		t.Errorf("claimed %v", names)
	}
	if c := (AccessPolicy{}).NamespaceClaims(requestIn("team-a", rule(teamA, core, []string{"configmaps", "pods/log"}, readOnly)), nil); len(c) != 0 {
		t.Errorf("a rule without credentials or workloads claims %+v", c)
	}
}

// TestNamespaceCreatedFor: only a namespace annotated as created for exactly this owner may be claimed; the
// refusal names the claiming field, the class's code and the allowance key.
func TestNamespaceCreatedFor(t *testing.T) {
	owner := Owner{Namespace: "kcp-system", Name: "lm"}
	if err := CheckNamespaceCreatedFor(owner, "team-a", NamespaceAnnotations(owner)); err != nil {
		t.Errorf("created for the owner: %v", err)
	}
	for _, tc := range []struct {
		reason      string
		annotations map[string]string
	}{
		{"existed before (no annotation)", nil},
		{"created by an earlier operator version (no owner recorded)", map[string]string{LabelManagedBy: ManagedByValue}},
		{"created for another request", NamespaceAnnotations(Owner{Namespace: "kcp-system", Name: "other"})},
		{"created for a request of the same name in another KCP namespace", NamespaceAnnotations(Owner{Namespace: "other", Name: "lm"})},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			err := CheckNamespaceCreatedFor(owner, "istio-system", tc.annotations)
			var nc *NamespaceNotCreatedError
			if !errors.As(err, &nc) || nc.Namespace != "istio-system" {
				t.Fatalf("err = %v, want a NamespaceNotCreatedError", err)
			}
			claims := []NamespaceClaim{{Namespace: "istio-system", Field: "spec.rules[2]", Code: CodeCredentialsExistingNamespace, What: "Secrets"}}
			checkRefusal(t, RefuseClaim(claims, nc), ErrEscalation, "spec.rules[2]", CodeCredentialsExistingNamespace, "sharedNamespaces")
		})
	}
}
