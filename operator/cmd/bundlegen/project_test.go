package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/operator/manifests"
)

// projectFile is the part of kubebuilder's PROJECT format (version 3) the test checks.
type projectFile struct {
	Domain      string         `json:"domain"`
	Layout      []string       `json:"layout"`
	Plugins     map[string]any `json:"plugins"`
	ProjectName string         `json:"projectName"`
	Repo        string         `json:"repo"`
	Version     string         `json:"version"`
	Resources   []struct {
		API struct {
			CRDVersion string `json:"crdVersion"`
			Namespaced bool   `json:"namespaced"`
		} `json:"api"`
		Controller bool   `json:"controller"`
		Domain     string `json:"domain"`
		Group      string `json:"group"`
		Kind       string `json:"kind"`
		Path       string `json:"path"`
		Version    string `json:"version"`
	} `json:"resources"`
}

// controllerPackages are the controller packages not named after their kind in lower case: runtime would shadow
// Go's package of that name (issue 28.5).
var controllerPackages = map[string]string{"Runtime": "kymaruntime"}

// TestProjectFileDescribesTheLayout: PROJECT (hand-written, no scaffolding tool here) names exactly the CRDs of
// config/crd with their group, version and scope, packages and controllers that exist, and the layout and package
// name the bundle declares.
func TestProjectFileDescribesTheLayout(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "PROJECT"))
	if err != nil {
		t.Fatal(err)
	}
	var p projectFile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("PROJECT: %v", err)
	}
	if p.Version != "3" || p.ProjectName != defaultPackage || p.Repo != "github.com/kyma-project/kim" ||
		!cmp.Equal(p.Layout, []string{projectLayout}) {
		t.Errorf("PROJECT header: version %q, projectName %q, repo %q, layout %v", p.Version, p.ProjectName, p.Repo, p.Layout)
	}
	for _, plugin := range []string{"manifests.sdk.operatorframework.io/v2", "scorecard.sdk.operatorframework.io/v2"} {
		if _, ok := p.Plugins[plugin]; !ok {
			t.Errorf("PROJECT lacks the operator-sdk plugin %s (the bundle and scorecard layout follow it)", plugin)
		}
	}
	objs, err := manifests.Render(filepath.Join(root, "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, u := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := fromUnstructured(u, crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			want[crd.Spec.Names.Kind] = strings.Join([]string{crd.Spec.Group, v.Name, string(crd.Spec.Scope)}, " ")
		}
	}
	got := map[string]string{}
	for _, r := range p.Resources {
		scope := "Cluster"
		if r.API.Namespaced {
			scope = "Namespaced"
		}
		got[r.Kind] = strings.Join([]string{r.Group + "." + r.Domain, r.Version, scope}, " ")
		if r.Domain != p.Domain || r.API.CRDVersion != "v1" {
			t.Errorf("%s: domain %q (project %q), crdVersion %q", r.Kind, r.Domain, p.Domain, r.API.CRDVersion)
		}
		dir := strings.TrimPrefix(r.Path, p.Repo+"/")
		if files, _ := filepath.Glob(filepath.Join(root, dir, "*_types.go")); len(files) == 0 {
			t.Errorf("%s: path %s has no *_types.go", r.Kind, r.Path)
		}
		if r.Controller {
			dir := strings.ToLower(r.Kind)
			if d, ok := controllerPackages[r.Kind]; ok {
				dir = d
			}
			if _, err := os.Stat(filepath.Join(root, "operator", "controllers", dir)); err != nil {
				t.Errorf("%s: controller: true, but operator/controllers/%s does not exist", r.Kind, dir)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PROJECT resources vs. config/crd (-crd +PROJECT):\n%s", diff)
	}
	kinds := make([]string, 0, len(got))
	for k := range got {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if len(kinds) < 2 {
		t.Errorf("PROJECT lists %v; expected Runtime and GardenerCluster", kinds)
	}
}
