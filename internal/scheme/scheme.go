// Package scheme holds the scheme every client of the operator is built with (the manager, the garden cluster, the
// kim CLI, the probe and the test environment). It holds nothing else: what each controller is built from is
// declared next to it, as its package's Deps, and filled by the composition root (operator/app).
package scheme

import (
	"fmt"
	"sync"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// New returns the scheme with every type the operator reads or writes in KCP and in the garden. Clients built with
// it speak protobuf to the garden for Gardener's types (see gardenerProtobuf).
func New() (*runtime.Scheme, error) {
	if err := gardenerProtobuf(); err != nil {
		return nil, err
	}
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

var protobufOnce = sync.OnceValue(func() error {
	for _, add := range []func(*runtime.Scheme) error{gardencorev1beta1.AddToScheme, securityv1alpha1.AddToScheme} {
		if err := apiutil.AddToProtobufScheme(add); err != nil {
			return fmt.Errorf("enable protobuf for Gardener's types: %w", err)
		}
	}
	return nil
})

// gardenerProtobuf makes controller-runtime's clients and caches ask the gardener-apiserver for protobuf instead of
// JSON for shoots, credentials bindings and the rest of Gardener's core and security types, as they already do for
// Kubernetes' own types (controller-runtime decides per type from a process-wide list, which this extends once).
// Gardener generates protobuf for these API groups and its own components talk to the gardener-apiserver in it.
// Decoding a shoot from protobuf costs a fraction of decoding its JSON, and every Gardener report on a shoot is
// one such decode in the watch (docs/operations/scale.md). Custom resources (Runtime, GardenerCluster) stay JSON:
// the kube-apiserver serves no protobuf for CRDs.
func gardenerProtobuf() error { return protobufOnce() }
