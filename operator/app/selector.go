package app

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

func managedSecretSelector() (labels.Selector, error) {
	req, err := labels.NewRequirement(LabelManagedBy, selection.Equals, []string{ManagedByValue})
	if err != nil {
		return nil, fmt.Errorf("secret cache selector: %w", err)
	}
	return labels.NewSelector().Add(*req), nil
}
