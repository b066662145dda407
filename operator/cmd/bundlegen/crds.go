package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ownedCRDs checks the hand-written owned entries of the CSV base against the generated CRDs: every CRD needs an
// entry (with descriptions) and every descriptor must name a field of the CRD's schema, so a renamed API field breaks
// `make bundle` instead of silently breaking the console.
func ownedCRDs(base []operatorsv1alpha1.CRDDescription, crds []*apiextensionsv1.CustomResourceDefinition) ([]operatorsv1alpha1.CRDDescription, error) {
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range crds {
		byName[crd.Name] = crd
	}
	var errs []error
	seen := map[string]bool{}
	var out []operatorsv1alpha1.CRDDescription
	for _, desc := range base {
		crd, ok := byName[desc.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("CSV base owns %s, but there is no such CRD in config/crd", desc.Name))
			continue
		}
		seen[desc.Name] = true
		var schema *apiextensionsv1.JSONSchemaProps
		for _, v := range crd.Spec.Versions {
			if v.Name == desc.Version && v.Schema != nil {
				schema = v.Schema.OpenAPIV3Schema
			}
		}
		if schema == nil {
			errs = append(errs, fmt.Errorf("CSV base owns %s version %s, which the CRD does not serve with a schema", desc.Name, desc.Version))
			continue
		}
		if desc.Kind != crd.Spec.Names.Kind {
			errs = append(errs, fmt.Errorf("CSV base owns %s as kind %s, the CRD says %s", desc.Name, desc.Kind, crd.Spec.Names.Kind))
		}
		for _, d := range desc.SpecDescriptors {
			if !hasPath(schema, "spec."+d.Path) {
				errs = append(errs, fmt.Errorf("%s: spec descriptor %q is not a field of the CRD", desc.Name, d.Path))
			}
		}
		for _, d := range desc.StatusDescriptors {
			if !hasPath(schema, "status."+d.Path) {
				errs = append(errs, fmt.Errorf("%s: status descriptor %q is not a field of the CRD", desc.Name, d.Path))
			}
		}
		out = append(out, desc)
	}
	for _, crd := range crds {
		if !seen[crd.Name] {
			errs = append(errs, fmt.Errorf("CRD %s has no owned entry (description, descriptors) in config/manifests/bases", crd.Name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// hasPath reports whether a dotted descriptor path ("shoot.provider.type", "workers[0].name") exists in the schema.
func hasPath(schema *apiextensionsv1.JSONSchemaProps, path string) bool {
	cur := schema
	for _, seg := range strings.Split(path, ".") {
		name, _, indexed := strings.Cut(seg, "[")
		next, ok := cur.Properties[name]
		if !ok {
			return false
		}
		cur = &next
		if indexed {
			if cur.Items == nil || cur.Items.Schema == nil {
				return false
			}
			cur = cur.Items.Schema
		}
	}
	return true
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		return fmt.Errorf("decode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
