package testenv_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/test/testenv"
)

// TestBundlePermissionsAreTheGeneratedRole: what the tests grant the operator is the CSV's, and the CSV carries
// every rule config/rbac/role.yaml generates from the +kubebuilder:rbac markers (a marker that never reached the
// bundle would be granted in tests but not in production, or the reverse).
func TestBundlePermissionsAreTheGeneratedRole(t *testing.T) {
	sa, namespaced, clusterWide, err := testenv.BundlePermissions(testenv.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	if sa != "kim-controller-manager" {
		t.Errorf("ServiceAccount %q, want kim-controller-manager (config/rbac/service_account.yaml)", sa)
	}
	if len(clusterWide) == 0 {
		t.Error("no cluster permissions: the metrics endpoint needs TokenReviews and SubjectAccessReviews")
	}
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	generated := &rbacv1.Role{}
	if err := yaml.Unmarshal(data, generated); err != nil {
		t.Fatal(err)
	}
	for _, want := range generated.Rules {
		if !slices.ContainsFunc(namespaced, func(got rbacv1.PolicyRule) bool {
			return slices.Equal(got.APIGroups, want.APIGroups) && slices.Equal(got.Resources, want.Resources) &&
				slices.Equal(got.Verbs, want.Verbs)
		}) {
			t.Errorf("config/rbac/role.yaml rule %v is not among the CSV's permissions", want)
		}
	}
}
