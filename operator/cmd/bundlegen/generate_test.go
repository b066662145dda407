package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// committedInput regenerates with the version and image of the committed bundle, so a release built with
// `make bundle VERSION=... IMG=...` is still checked for staleness.
func committedInput(t *testing.T) Input {
	t.Helper()
	csv := loadCSV(t)
	return Input{
		ManifestsDir:   filepath.Join(repoRoot(t), "config", "manifests"),
		Version:        csv.Spec.Version.String(),
		Image:          csv.Annotations["containerImage"],
		Package:        defaultPackage,
		Channels:       []string{defaultChannel},
		DefaultChannel: defaultChannel,
	}
}

// TestBundleIsUpToDate fails when bundle/ or bundle.Dockerfile differ from what `make bundle` generates now.
func TestBundleIsUpToDate(t *testing.T) {
	root := repoRoot(t)
	b, err := Generate(committedInput(t))
	if err != nil {
		t.Fatal(err)
	}
	var committed []string
	for _, sub := range generatedDirs {
		err := filepath.WalkDir(filepath.Join(root, "bundle", sub), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(root, "bundle"), p)
			committed = append(committed, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(committed)
	if diff := cmp.Diff(sortedKeys(b.Files), committed); diff != "" {
		t.Fatalf("bundle/ file list is stale; run `make bundle` (-generated +committed):\n%s", diff)
	}
	for rel, want := range b.Files {
		got, err := os.ReadFile(filepath.Join(root, "bundle", rel))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("bundle/%s is stale; run `make bundle` (-generated +committed):\n%s", rel, diff)
		}
	}
	got, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(b.Dockerfile), string(got)); diff != "" {
		t.Errorf("bundle.Dockerfile is stale; run `make bundle`:\n%s", diff)
	}
}

// TestGenerateIsDeterministic: two runs write the same bytes (map order, timestamps, ... must not leak in).
func TestGenerateIsDeterministic(t *testing.T) {
	in := committedInput(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		b, err := Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Write(filepath.Join(d, "bundle"), filepath.Join(d, "bundle.Dockerfile")); err != nil {
			t.Fatal(err)
		}
	}
	a, b := readTree(t, dirs[0]), readTree(t, dirs[1])
	if len(a) == 0 {
		t.Fatal("nothing written")
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateSetsVersionImageAndRBAC(t *testing.T) {
	in := committedInput(t)
	in.Version, in.Image = "1.2.3", "registry.example/kim:1.2.3"
	b, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	csv := string(b.Files["manifests/kim.clusterserviceversion.yaml"])
	for _, want := range []string{"name: kim.v1.2.3", "version: 1.2.3", "image: registry.example/kim:1.2.3", "containerImage: registry.example/kim:1.2.3"} {
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	if strings.Contains(csv, "controller:latest") {
		t.Error("CSV still has the kustomize placeholder image")
	}
}

// TestGenerateTakesAnImageByDigest: the release generates its bundle with the manager image by the digest it pushed
// (docs/release.md), and the CSV then names that digest everywhere it names the image: the Deployment, the
// containerImage annotation and relatedImages (what a mirror for a disconnected landscape copies).
func TestGenerateTakesAnImageByDigest(t *testing.T) {
	in := committedInput(t)
	in.Version, in.Image = "1.2.3", "ghcr.io/kyma-project/kim@sha256:"+strings.Repeat("ab", 32)
	b, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(b.Files["manifests/kim.clusterserviceversion.yaml"], csv); err != nil {
		t.Fatal(err)
	}
	if got := csv.Annotations["containerImage"]; got != in.Image {
		t.Errorf("containerImage %q, want %q", got, in.Image)
	}
	if len(csv.Spec.RelatedImages) != 1 || csv.Spec.RelatedImages[0].Image != in.Image {
		t.Errorf("relatedImages %+v, want only %s", csv.Spec.RelatedImages, in.Image)
	}
	if got := managerContainerOf(t, csv).Image; got != in.Image {
		t.Errorf("manager container image %q, want %q", got, in.Image)
	}
}

// TestInternalObjectsAreOwnedCRDs: the CSV's internal-objects annotation (OLM's convention: a JSON list of CRD names)
// names the DeletionRecord, and only CRDs the bundle owns, so a renamed CRD cannot silently show up in a console
// again.
func TestInternalObjectsAreOwnedCRDs(t *testing.T) {
	csv := loadCSV(t)
	var internal []string
	if err := json.Unmarshal([]byte(csv.Annotations["operators.operatorframework.io/internal-objects"]), &internal); err != nil {
		t.Fatalf("internal-objects annotation %q is not a JSON list: %v", csv.Annotations["operators.operatorframework.io/internal-objects"], err)
	}
	owned := map[string]bool{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[d.Name] = true
	}
	if !slices.Contains(internal, "deletionrecords.infrastructuremanager.kyma-project.io") {
		t.Errorf("internal objects %v do not name the DeletionRecord CRD", internal)
	}
	for _, name := range internal {
		if !owned[name] {
			t.Errorf("internal object %s is not a CRD the CSV owns (%v)", name, owned)
		}
	}
}

func TestGenerateRejectsBadInput(t *testing.T) {
	base := committedInput(t)
	for _, tc := range []struct {
		reason string
		mutate func(*Input)
	}{
		{"a version that is not semver cannot name a CSV", func(in *Input) { in.Version = "v1" }},
		{"without channels OLM cannot place the bundle", func(in *Input) { in.Channels = nil }},
		{"a missing kustomization is an error, not an empty bundle", func(in *Input) { in.ManifestsDir = t.TempDir() }},
	} {
		in := base
		tc.mutate(&in)
		if _, err := Generate(in); err == nil {
			t.Errorf("%s: Generate succeeded", tc.reason)
		}
	}
}

func TestOwnedCRDsChecksDescriptors(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "things.example.io"
	crd.Spec.Names.Kind = "Thing"
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{
		OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"pools": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}}}}},
			}},
			"status": {Properties: map[string]apiextensionsv1.JSONSchemaProps{"state": {Type: "string"}}},
		}},
	}}}
	owned := func(spec, status string) []operatorsv1alpha1.CRDDescription {
		return []operatorsv1alpha1.CRDDescription{{Name: crd.Name, Kind: "Thing", Version: "v1",
			SpecDescriptors:   []operatorsv1alpha1.SpecDescriptor{{Path: spec}},
			StatusDescriptors: []operatorsv1alpha1.StatusDescriptor{{Path: status}}}}
	}
	for _, tc := range []struct {
		reason       string
		owned        []operatorsv1alpha1.CRDDescription
		wantErrorHas string
	}{
		{reason: "existing fields, array index included", owned: owned("pools[0].name", "state")},
		{reason: "a renamed spec field breaks the bundle", owned: owned("pool.name", "state"), wantErrorHas: `spec descriptor "pool.name"`},
		{reason: "a status descriptor is checked under status", owned: owned("pools", "phase"), wantErrorHas: `status descriptor "phase"`},
		{reason: "a CRD without owned entry has no description", owned: nil, wantErrorHas: "has no owned entry"},
	} {
		_, err := ownedCRDs(tc.owned, []*apiextensionsv1.CustomResourceDefinition{crd})
		switch {
		case tc.wantErrorHas == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.reason, err)
		case tc.wantErrorHas != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrorHas)):
			t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.wantErrorHas)
		}
	}
}

func rbacObj(kind, name string, rest map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range rest {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func binding(kind, name, roleKind, role, sa string) *unstructured.Unstructured {
	return rbacObj(kind, name, map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": role},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": "ns"}},
	})
}

func rules(group, resource, verb string) map[string]any {
	return map[string]any{"rules": []any{map[string]any{"apiGroups": []any{group}, "resources": []any{resource}, "verbs": []any{verb}}}}
}

// TestPermissionsFollowBindings: whatever roles `make manifests` generates, the bindings decide where they go.
func TestPermissionsFollowBindings(t *testing.T) {
	objs := []*unstructured.Unstructured{
		rbacObj("ClusterRole", "manager-role", rules("example.io", "things", "get")),
		rbacObj("Role", "manager-role", rules("", "secrets", "get")),
		rbacObj("ClusterRole", "viewer", rules("example.io", "things", "list")),
		binding("ClusterRoleBinding", "manager", "ClusterRole", "manager-role", "op"),
		binding("RoleBinding", "manager", "Role", "manager-role", "op"),
		binding("RoleBinding", "dangling", "Role", "not-generated-yet", "op"),
	}
	p, err := permissionsFor([]string{"op"}, objs)
	if err != nil {
		t.Fatal(err)
	}
	wantCluster := []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op",
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"example.io"}, Resources: []string{"things"}, Verbs: []string{"get"}}}}}
	wantNamespaced := []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op",
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}}
	if diff := cmp.Diff(wantCluster, p.cluster); diff != "" {
		t.Errorf("clusterPermissions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNamespaced, p.namespaced); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	var unbound []string
	for _, u := range p.unbound {
		unbound = append(unbound, u.GetKind()+"/"+u.GetName())
	}
	if diff := cmp.Diff([]string{"ClusterRole/viewer"}, unbound); diff != "" {
		t.Errorf("objects shipped as manifests (-want +got):\n%s", diff)
	}

	mixed := binding("ClusterRoleBinding", "mixed", "ClusterRole", "manager-role", "op")
	mixed.Object["subjects"] = append(mixed.Object["subjects"].([]any), map[string]any{"kind": "User", "name": "alice"})
	if _, err := permissionsFor([]string{"op"}, append(objs, mixed)); err == nil {
		t.Error("a binding granting the operator's role to a person as well must be rejected")
	}
}

// TestValidatorsCatchBrokenCSV proves the validation test can fail: the committed bundle with its icon and
// maintainers removed and a broken install mode must produce findings.
func TestValidatorsCatchBrokenCSV(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join(repoRoot(t), "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	bundle.CSV.Spec.Icon = nil
	bundle.CSV.Spec.Maintainers = []operatorsv1alpha1.Maintainer{{Name: "x", Email: "not-an-email"}}
	bundle.CSV.Spec.InstallModes = nil
	results := validation.DefaultBundleValidators.WithValidators(validation.OperatorHubV2Validator).Validate(bundle)
	var findings []string
	for _, r := range results {
		for _, e := range append(r.Errors, r.Warnings...) {
			findings = append(findings, e.Error())
		}
	}
	for _, want := range []string{"Icon not specified", "not-an-email"} {
		found := false
		for _, f := range findings {
			found = found || strings.Contains(f, want)
		}
		if !found {
			t.Errorf("no finding mentioning %q in %v", want, findings)
		}
	}
}
