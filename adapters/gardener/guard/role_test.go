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

// TestGardenerRoleIsLeastPrivilege holds every RBAC object of config/gardener to least privilege, as
// TestRBACIsLeastPrivilege holds the bundle: no wildcards; Secrets (the project's hold the cloud credentials) only
// namespaced and only get, create and delete by name, never list, watch or deletecollection (RBAC cannot limit
// those to the operator's copies, so either would reach every Secret of the project); nothing cluster-wide but
// listing seeds and getting cloud profiles.
func TestGardenerRoleIsLeastPrivilege(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "config", "gardener", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in config/gardener: %v", err)
	}
	rules := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			role := &rbacv1.ClusterRole{} // Role has the same shape
			if err := yaml.Unmarshal([]byte(doc), role); err != nil {
				t.Fatalf("decode %s: %v", f, err)
			}
			if role.Kind != "Role" && role.Kind != "ClusterRole" {
				continue
			}
			if role.AggregationRule != nil {
				t.Errorf("%s %s: aggregated roles can grow after review", f, role.Name)
			}
			for _, r := range role.Rules {
				rules++
				for _, list := range [][]string{r.Verbs, r.Resources, r.APIGroups, r.NonResourceURLs, r.ResourceNames} {
					for _, v := range list {
						if strings.Contains(v, "*") {
							t.Errorf("%s %s: wildcard %q in rule %+v", filepath.Base(f), role.Name, v, r)
						}
					}
				}
				gardenCore := slices.Equal(r.APIGroups, []string{"core.gardener.cloud"})
				listsSeeds := gardenCore && slices.Equal(r.Resources, []string{"seeds"}) && slices.Equal(r.Verbs, []string{"list"})
				getsProfiles := gardenCore && slices.Equal(r.Resources, []string{"cloudprofiles"}) && slices.Equal(r.Verbs, []string{"get"})
				if role.Kind == "ClusterRole" && !listsSeeds && !getsProfiles {
					t.Errorf("%s %s: cluster-wide rule %+v; only listing seeds and getting cloud profiles are cluster-wide", filepath.Base(f), role.Name, r)
				}
				if slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "secrets") {
					for _, v := range r.Verbs {
						if !slices.Contains([]string{"get", "create", "delete"}, v) {
							t.Errorf("%s %s: verb %q on Secrets in rule %+v; only get, create and delete by name", filepath.Base(f), role.Name, v, r)
						}
					}
				}
			}
		}
	}
	if rules == 0 {
		t.Fatal("config/gardener grants nothing; the test read the wrong files")
	}
}
