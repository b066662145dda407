package main

import (
	"errors"
	"fmt"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Kubernetes minor versions the search covers. CRD validation rules (x-kubernetes-validations) are GA since 1.29, the
// oldest version we consider at all; the newest is the version of the apiextensions library in go.mod.
const (
	oldestKubeMinor = 29
	newestKubeMinor = 36
)

// statusRatchetingMinor is the first Kubernetes minor whose API server ratchets CRD validation on writes of the
// status subresource too (kubernetes/kubernetes#129506, in apiextensions-apiserver from v0.33; v0.32's status
// strategy validates without it). The operator takes over Runtimes stored under the previous manager's looser CRD:
// before 1.33 a status write of such a Runtime is judged against every rule of its unchanged spec and refused, so
// the operator could not report on it (TestIntegrationRuntimesStoredUnderThePreviousCRDStayWritable fails on 1.31).
const statusRatchetingMinor = 33

// minKubeVersion returns the oldest Kubernetes version (1.<minor>.0) whose API server accepts the CRDs' validation
// rules. A kube-apiserver of version N compiles the rules of a new or changed CRD with the CEL libraries of N-1 (its
// compatibility version, so a rollback to N-1 keeps working): a library introduced in 1.30 (e.g. isCIDR) is usable in
// new CRDs from 1.31 on. The search compiles every rule with the CEL environment of each version, as the API server
// does, and returns the first version where all compile.
func minKubeVersion(crds []*apiextensionsv1.CustomResourceDefinition) (string, error) {
	var lastErr error
	for minor := oldestKubeMinor; minor <= newestKubeMinor; minor++ {
		envSet := environment.MustBaseEnvSet(version.MajorMinor(1, uint(minor-1)))
		if err := compileRules(crds, envSet); err != nil {
			lastErr = err
			continue
		}
		return fmt.Sprintf("1.%d.0", minor), nil
	}
	return "", fmt.Errorf("the CRDs' validation rules do not compile for any Kubernetes up to 1.%d: %w", newestKubeMinor, lastErr)
}

// compileRules compiles every x-kubernetes-validations rule (and messageExpression) of every served version.
func compileRules(crds []*apiextensionsv1.CustomResourceDefinition, envSet *environment.EnvSet) error {
	var errs []error
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			internal := &apiextensionsinternal.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return fmt.Errorf("%s %s: convert schema: %w", crd.Name, v.Name, err)
			}
			s, err := schema.NewStructural(internal)
			if err != nil {
				return fmt.Errorf("%s %s: structural schema: %w", crd.Name, v.Name, err)
			}
			errs = append(errs, compileNode(s, crd.Name+"/"+v.Name, true, envSet)...)
		}
	}
	return errors.Join(errs...)
}

func compileNode(s *schema.Structural, path string, root bool, envSet *environment.EnvSet) []error {
	var errs []error
	if len(s.XValidations) > 0 {
		results, err := cel.Compile(s, model.SchemaDeclType(s, root || s.XEmbeddedResource), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
		if err != nil {
			return []error{fmt.Errorf("%s: %w", path, err)}
		}
		for i, r := range results {
			if r.Error != nil {
				errs = append(errs, fmt.Errorf("%s rule %q: %s", path, s.XValidations[i].Rule, r.Error.Detail))
			}
			if r.MessageExpressionError != nil {
				errs = append(errs, fmt.Errorf("%s messageExpression %q: %s", path, s.XValidations[i].MessageExpression, r.MessageExpressionError.Detail))
			}
		}
	}
	for name, p := range s.Properties {
		errs = append(errs, compileNode(&p, path+"."+name, false, envSet)...)
	}
	if s.Items != nil {
		errs = append(errs, compileNode(s.Items, path+"[]", false, envSet)...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		errs = append(errs, compileNode(s.AdditionalProperties.Structural, path+"{}", false, envSet)...)
	}
	return errs
}

// requiredKubeVersion is the oldest Kubernetes the CRDs work on, and why: their rules compile there
// (minKubeVersion), and it ratchets validation on status writes (statusRatchetingMinor).
func requiredKubeVersion(crds []*apiextensionsv1.CustomResourceDefinition) (need, why string, err error) {
	need, err = minKubeVersion(crds)
	if err != nil {
		return "", "", err
	}
	why = "the CRDs' validation rules need it (a kube-apiserver compiles new rules with the CEL libraries of the previous minor version)"
	if ratcheting := fmt.Sprintf("1.%d.0", statusRatchetingMinor); version.MustParseGeneric(need).LessThan(version.MustParseGeneric(ratcheting)) {
		need, why = ratcheting, "before it the API server does not ratchet validation on status writes: a Runtime stored under "+
			"the previous manager's CRD that breaks a rule of ours could not get a status"
	}
	return need, why, nil
}

// checkMinKubeVersion fails when the CSV base promises an older Kubernetes than the CRDs need.
func checkMinKubeVersion(declared string, crds []*apiextensionsv1.CustomResourceDefinition) error {
	need, why, err := requiredKubeVersion(crds)
	if err != nil {
		return err
	}
	d, err := version.ParseGeneric(strings.TrimPrefix(declared, "v"))
	if err != nil {
		return fmt.Errorf("minKubeVersion %q of the CSV base: %w", declared, err)
	}
	if d.LessThan(version.MustParseGeneric(need)) {
		return fmt.Errorf("the CSV base declares minKubeVersion %s, but the operator needs Kubernetes %s: %s; set %s in "+
			"config/manifests/bases", declared, need, why, need)
	}
	return nil
}
