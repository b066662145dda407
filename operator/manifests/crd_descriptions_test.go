package manifests_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDFieldsHaveDescriptions: every field of every CRD the operator ships has a description, which kubectl
// explain, the OLM console and editors show; controller-gen takes it from the Go doc comment of the API type's field,
// so a field without one has none. Only metadata is left out: it is Kubernetes' ObjectMeta, described by the API
// server itself.
func TestCRDFieldsHaveDescriptions(t *testing.T) {
	files, err := filepath.Glob(repoPath("config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s %s has no schema", crd.Name, v.Name)
				continue
			}
			root := *v.Schema.OpenAPIV3Schema
			delete(root.Properties, "metadata")
			missing := undescribed(root, "")
			slices.Sort(missing)
			for _, path := range missing {
				t.Errorf("%s %s: %s has no description: give the API type's field a Go doc comment, then make manifests", crd.Name, v.Name, path)
			}
		}
	}
}

// undescribed lists the paths below s (fields, list items' fields, map values' fields) that have no description.
func undescribed(s apiextensionsv1.JSONSchemaProps, path string) []string {
	var missing []string
	for name, p := range s.Properties {
		if p.Description == "" {
			missing = append(missing, path+"."+name)
		}
		missing = append(missing, undescribed(p, path+"."+name)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		missing = append(missing, undescribed(*s.Items.Schema, path+"[]")...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		missing = append(missing, undescribed(*s.AdditionalProperties.Schema, path+"{}")...)
	}
	return missing
}
