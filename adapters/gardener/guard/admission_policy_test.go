package guard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestGardenerAdmissionPoliciesShip keeps config/gardener's admission policies in force wherever the Role is: the
// kustomization applies the file, every policy fails closed, has a Deny binding, and matches the ServiceAccount the
// Role is bound to; the Secret policy covers create, update and delete of Secrets, the binding policy every write of
// CredentialsBindings. What the policies allow is proven on the real API servers
// (TestIntegrationGardenerWritesLimitedByAdmissionPolicy in test/testenv).
func TestGardenerAdmissionPoliciesShip(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "config", "gardener")
	kust, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kust), "- admission_policy.yaml") {
		t.Error("config/gardener/kustomization.yaml does not apply admission_policy.yaml")
	}
	saData, err := os.ReadFile(filepath.Join(dir, "service_account.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{}
	if err := yaml.Unmarshal(saData, sa); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "admission_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]admissionv1.ValidatingAdmissionPolicy{}
	bound := map[string]bool{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		switch kind.Kind {
		case "ValidatingAdmissionPolicy":
			p := admissionv1.ValidatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
				t.Fatal(err)
			}
			policies[p.Name] = p
		case "ValidatingAdmissionPolicyBinding":
			b := admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict([]byte(doc), &b); err != nil {
				t.Fatal(err)
			}
			bound[b.Spec.PolicyName] = slices.Contains(b.Spec.ValidationActions, admissionv1.Deny)
		}
	}
	want := map[string]struct{ group, resource string }{
		"kim-gardener-secrets":             {"", "secrets"},
		"kim-gardener-credentialsbindings": {"security.gardener.cloud", "credentialsbindings"},
	}
	for name, w := range want {
		p, ok := policies[name]
		if !ok {
			t.Errorf("policy %s missing", name)
			continue
		}
		if !bound[name] {
			t.Errorf("policy %s has no binding with validationActions Deny", name)
		}
		if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionv1.Fail {
			t.Errorf("policy %s does not fail closed", name)
		}
		matchesSA := slices.ContainsFunc(p.Spec.MatchConditions, func(c admissionv1.MatchCondition) bool {
			return strings.Contains(c.Expression, "':"+sa.Name+"'") && strings.Contains(c.Expression, "system:serviceaccount:")
		})
		if !matchesSA {
			t.Errorf("policy %s does not match the ServiceAccount %s of service_account.yaml", name, sa.Name)
		}
		covered := false
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			ops := r.Operations
			if slices.Contains(r.APIGroups, w.group) && slices.Contains(r.Resources, w.resource) &&
				slices.Contains(ops, admissionv1.Create) && slices.Contains(ops, admissionv1.Update) && slices.Contains(ops, admissionv1.Delete) {
				covered = true
			}
		}
		if !covered {
			t.Errorf("policy %s does not cover create, update and delete of %s", name, w.resource)
		}
		if len(p.Spec.Validations) == 0 {
			t.Errorf("policy %s validates nothing", name)
		}
	}
}
