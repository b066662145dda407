package sakubeconfig

import (
	"errors"
	"slices"
	"testing"
)

// powerShape is a rule that reaches a cluster power, with the refusal code the policy gives it (a rule that also
// reaches Secrets is refused for those first).
type powerShape struct {
	reason string
	rule   Rule
	code   RefusalCode
}

func powerShapes() []powerShape {
	admission := []string{"admissionregistration.k8s.io"}
	certs := []string{"certificates.k8s.io"}
	return []powerShape{
		{"nodes/proxy get cluster-wide: kubelet exec over a WebSocket on every node", rule(nil, core, []string{"nodes/proxy"}, []string{"get"}), CodePowerNodes},
		{"nodes/proxy create cluster-wide", rule(nil, core, []string{"nodes/proxy"}, []string{"create"}), CodePowerNodes},
		{"*/proxy cluster-wide includes nodes/proxy", rule(nil, core, []string{"*/proxy"}, []string{"get"}), CodePowerNodes},
		{"read-only on every resource of the core group cluster-wide includes nodes/proxy", rule(nil, core, []string{"pods", "*"}, []string{"list", "get"}), CodeCredentialsClusterWide},
		{"patch nodes", rule(nil, core, []string{"nodes"}, []string{"patch"}), CodePowerNodes},
		{"update nodes/status", rule(nil, core, []string{"nodes/status"}, []string{"update"}), CodePowerNodes},
		{"create nodes in any group", rule(nil, anyGroup, []string{"nodes"}, []string{"create"}), CodePowerNodes},
		{"create mutatingwebhookconfigurations", rule(nil, admission, []string{"mutatingwebhookconfigurations"}, []string{"create"}), CodePowerAdmission},
		{"delete validatingwebhookconfigurations", rule(nil, admission, []string{"validatingwebhookconfigurations"}, []string{"delete"}), CodePowerAdmission},
		{"patch validatingadmissionpolicies", rule(nil, admission, []string{"validatingadmissionpolicies"}, []string{"patch"}), CodePowerAdmission},
		{"create validatingadmissionpolicybindings", rule(nil, admission, []string{"validatingadmissionpolicybindings"}, []string{"create"}), CodePowerAdmission},
		{"every verb on every admission resource", rule(nil, admission, []string{"*"}, []string{"create", "update"}), CodePowerAdmission},
		{"update certificatesigningrequests/approval", rule(nil, certs, []string{"certificatesigningrequests/approval"}, []string{"update"}), CodePowerCertificateSigning},
		{"patch certificatesigningrequests/status", rule(nil, certs, []string{"certificatesigningrequests/status"}, []string{"patch"}), CodePowerCertificateSigning},
		{"approve on signers of one name", Rule{APIGroups: certs, Resources: []string{"signers"}, ResourceNames: []string{"kubernetes.io/kube-apiserver-client"}, Verbs: []string{"approve"}}, CodePowerCertificateSigning},
		{"sign on signers", rule(nil, certs, []string{"signers"}, []string{"sign"}), CodePowerCertificateSigning},
		{"wildcard verbs on signers", rule(nil, certs, []string{"signers"}, allVerbs), CodePowerCertificateSigning},
		{"create apiservices", rule(nil, []string{"apiregistration.k8s.io"}, []string{"apiservices"}, []string{"create"}), CodePowerAPIRegistration},
		{"update customresourcedefinitions", rule(nil, []string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, []string{"update"}), CodePowerAPIRegistration},
		{"delete customresourcedefinitions in any group", rule(nil, anyGroup, []string{"customresourcedefinitions"}, []string{"delete"}), CodePowerAPIRegistration},
		{"create persistentvolumes", rule(nil, core, []string{"persistentvolumes"}, []string{"create"}), CodePowerPersistentVolumes},
		{"patch namespaces cluster-wide", rule(nil, core, []string{"namespaces"}, []string{"patch"}), CodePowerNamespaces},
		{"update namespaces in one namespace: a RoleBinding grants writing its own namespace", rule(teamA, core, []string{"namespaces"}, []string{"update"}), CodePowerNamespaces},
		{"delete namespaces", rule(nil, core, []string{"namespaces"}, []string{"delete"}), CodePowerNamespaces},
		{"update namespaces/finalize", rule(nil, core, []string{"namespaces/finalize"}, []string{"update"}), CodePowerNamespaces},
		{"wildcard verbs on every resource of any group, named: each class refused", rule(nil, anyGroup, []string{"nodes", "apiservices"}, allVerbs), CodePowerNodes},
	}
}

// TestCheckRequestRefusesClusterPowers: each rule that reaches a cluster power is refused by default with its
// stable code and the allowance key, and the landscape's allowance for the requesting KCP namespace (only that
// namespace's, only that class) lets it through.
func TestCheckRequestRefusesClusterPowers(t *testing.T) {
	for _, sh := range powerShapes() {
		t.Run(sh.reason, func(t *testing.T) {
			req := requestIn("team-a", sh.rule)
			err := AccessPolicy{}.CheckRequest(req)
			mention := "allowedPowers"
			if !slices.Contains(Powers(), sh.code) {
				mention = "cluster-wide"
			}
			checkRefusal(t, err, ErrEscalation, "spec.rules[0]", sh.code, mention)
			if !slices.Contains(Powers(), sh.code) {
				return
			}
			var others []RefusalCode
			for _, c := range Powers() {
				if c != sh.code {
					others = append(others, c)
				}
			}
			if err := (AccessPolicy{AllowedPowers: map[string][]RefusalCode{"kcp-system": others}}).CheckRequest(req); !errors.Is(err, ErrEscalation) {
				t.Errorf("allowing every other power lets %s through: %v", sh.code, err)
			}
			if err := (AccessPolicy{AllowedPowers: map[string][]RefusalCode{"other": {sh.code}}}).CheckRequest(req); !errors.Is(err, ErrEscalation) {
				t.Errorf("another KCP namespace's allowance lets it through: %v", err)
			}
			if err := (AccessPolicy{AllowedPowers: map[string][]RefusalCode{"kcp-system": Powers()}}).CheckRequest(req); err != nil {
				t.Errorf("allowed to kcp-system: %v", err)
			}
		})
	}
}

// TestCheckRequestAllowsHarmlessNeighboursOfPowers: reading the powers' resources, creating a
// CertificateSigningRequest (approving is the power), writing namespaced-only resources, and cluster-scoped powers
// named in a namespaced rule (a RoleBinding never reaches a cluster-scoped resource) are no powers.
func TestCheckRequestAllowsHarmlessNeighboursOfPowers(t *testing.T) {
	for _, tc := range []struct {
		reason string
		rule   Rule
	}{
		{"read nodes and their metrics", rule(nil, core, []string{"nodes", "nodes/metrics", "nodes/stats"}, readOnly)},
		{"read webhook configurations", rule(nil, []string{"admissionregistration.k8s.io"}, []string{"mutatingwebhookconfigurations"}, readOnly)},
		{"create and read CertificateSigningRequests", rule(nil, []string{"certificates.k8s.io"}, []string{"certificatesigningrequests"}, []string{"create", "get"})},
		{"read customresourcedefinitions and apiservices", rule(nil, []string{"apiextensions.k8s.io", "apiregistration.k8s.io"}, []string{"customresourcedefinitions", "apiservices"}, readOnly)},
		{"create persistentvolumeclaims in its namespace", rule(teamA, core, []string{"persistentvolumeclaims"}, []string{"create"})},
		{"delete persistentvolumes", rule(nil, core, []string{"persistentvolumes"}, []string{"delete", "get"})},
		{"create namespaces", rule(nil, core, []string{"namespaces"}, []string{"create", "get", "list"})},
		{"nodes/proxy in a Role grants nothing", rule(teamA, core, []string{"nodes/proxy"}, []string{"get"})},
		{"mutatingwebhookconfigurations in a Role grant nothing", rule(teamA, []string{"admissionregistration.k8s.io"}, []string{"mutatingwebhookconfigurations"}, []string{"create"})},
		{"read-only on everything in its own namespace", rule(teamA, anyGroup, []string{"*"}, readOnly)},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if err := (AccessPolicy{}).CheckRequest(requestIn("team-a", tc.rule)); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// TestCheckClusterRoleRefusesPowers: a bound ClusterRole is judged like the request's rules: cluster-wide its
// node power is refused, in a namespace only its namespace writes are.
func TestCheckClusterRoleRefusesPowers(t *testing.T) {
	role := ClusterRole{Rules: []Rule{rule(nil, core, []string{"pods"}, readOnly), rule(nil, core, []string{"nodes/proxy", "namespaces"}, []string{"get", "patch"})}}
	req := requestIn("team-a")
	req.ClusterRole = &ClusterRoleRef{Name: "debugger"}
	checkRefusal(t, AccessPolicy{}.CheckClusterRole(req, role), ErrEscalation, "spec.clusterRole", CodePowerNodes, "ClusterRole debugger rule 1")
	req.ClusterRole.Namespaces = teamA
	checkRefusal(t, AccessPolicy{}.CheckClusterRole(req, role), ErrEscalation, "spec.clusterRole", CodePowerNamespaces, "ClusterRole debugger rule 1")
	allowed := AccessPolicy{AllowedPowers: map[string][]RefusalCode{"kcp-system": {CodePowerNamespaces}}}
	if err := allowed.CheckClusterRole(req, role); err != nil {
		t.Errorf("allowed: %v", err)
	}
}
