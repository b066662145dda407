package runtimeapi

import (
	"context"
	_ "embed" // the CRD asset
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// OpenIDConnectCRD is the CRD of authentication.gardener.cloud/v1alpha1 OpenIDConnect as YAML (assets/).
//
//go:embed assets/openidconnect-crd.yaml
var OpenIDConnectCRD []byte

// InstallOpenIDConnectCRD creates the OpenIDConnect CRD in the API server of cfg (if missing) and waits until it is
// served, as the shoot-oidc-service extension does in a real shoot.
func InstallOpenIDConnectCRD(ctx context.Context, cfg *rest.Config) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(OpenIDConnectCRD, crd); err != nil {
		return fmt.Errorf("OpenIDConnect CRD asset: %w", err)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("install OpenIDConnect CRD: %w", err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("install OpenIDConnect CRD: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not there yet: keep polling until the timeout
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("OpenIDConnect CRD not established: %w", err)
	}
	return nil
}
