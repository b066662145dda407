package app

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kyma-project/kim/core/domain/wire"
)

func managedSecretSelector() (labels.Selector, error) {
	req, err := labels.NewRequirement(wire.LabelManagedBy, selection.Equals, []string{wire.ManagedByValue})
	if err != nil {
		return nil, fmt.Errorf("secret cache selector: %w", err)
	}
	return labels.NewSelector().Add(*req), nil
}
