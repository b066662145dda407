// Package scheme holds the scheme every client of the operator is built with (the manager, the garden cluster, the
// kim CLI, the probe and the test environment). It holds nothing else: what each controller is built from is
// declared next to it, as its package's Deps, and filled by the composition root (operator/app).
package scheme

import (
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// New returns the scheme with every type the operator reads or writes in KCP and in the garden.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, imv1.AddToScheme, gardencorev1beta1.AddToScheme,
		// CredentialsBindings: only the label dirty of a deleted runtime's binding is written (docs/adr/0005).
		securityv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return s, nil
}
