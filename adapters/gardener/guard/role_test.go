package guard

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestPolicyMatchesGardenerRole keeps the guard and the documented Role in config/gardener identical (but for the
// rules only Gardener's admission uses, AdmissionOnlyRules), so neither can grow a permission the other does not
// know about.
func TestPolicyMatchesGardenerRole(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "gardener", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromRole []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		role := &rbacv1.ClusterRole{} // Role has the same shape
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatal(err)
		}
		ns := ""
		if role.Kind == "Role" {
			ns = "garden-kyma"
		}
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						fromRole = append(fromRole, g+"|"+res+"|"+ns+"|"+v)
					}
				}
			}
		}
	}
	var fromPolicy []string
	for _, r := range append(ProjectPolicy("garden-kyma").Rules, AdmissionOnlyRules("garden-kyma")...) {
		res := r.Resource
		if r.Subresource != "" {
			res += "/" + r.Subresource
		}
		for _, v := range r.Verbs {
			fromPolicy = append(fromPolicy, r.Group+"|"+res+"|"+r.Namespace+"|"+v)
		}
	}
	sort.Strings(fromRole)
	sort.Strings(fromPolicy)
	if len(fromRole) == 0 || slices.Contains(fromRole, "*") {
		t.Fatalf("unexpected role rules %v", fromRole)
	}
	if diff := cmp.Diff(fromRole, fromPolicy); diff != "" {
		t.Errorf("config/gardener/role.yaml and ProjectPolicy differ (-role +policy):\n%s", diff)
	}
}
