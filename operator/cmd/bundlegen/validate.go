package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	valerrors "github.com/operator-framework/api/pkg/validation/errors"
)

// justifiedWarnings are the validator warnings we accept, each explained in docs/operations/olm-validation.md.
// Any other warning fails `make bundle` and the tests.
var justifiedWarnings = []string{}

// Validate runs the validators `operator-sdk bundle validate --select-optional suite=operatorframework` runs
// (default bundle validators, good practices, OperatorHub, capabilities, categories, objects, deprecated APIs)
// against the bundle in dir, for the Kubernetes version the CSV declares as its minimum. Errors and unjustified
// warnings fail.
func Validate(dir string) error {
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return fmt.Errorf("load bundle %s: %w", dir, err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.GoodPracticesValidator,
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.ObjectValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	k8sVersion := strings.Join(strings.SplitN(strings.TrimPrefix(bundle.CSV.Spec.MinKubeVersion, "v"), ".", 3)[:2], ".")
	objs := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	var errs []error
	for _, r := range validators.Validate(objs...) {
		for _, e := range r.Errors {
			errs = append(errs, fmt.Errorf("validation error (%s): %w", r.Name, e))
		}
		for _, w := range r.Warnings {
			if !justified(w) {
				errs = append(errs, fmt.Errorf("unjustified validation warning (%s): %w; fix it or justify it in docs/operations/olm-validation.md", r.Name, w))
			}
		}
	}
	return errors.Join(errs...)
}

func justified(w valerrors.Error) bool {
	for _, s := range justifiedWarnings {
		if strings.Contains(w.Error(), s) {
			return true
		}
	}
	return false
}
