//go:build gardenbox

package gardener_test

import (
	"context"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
)

// TestIntegrationAdminKubeconfigIssuerContract runs the issuer contract against the real gardener-apiserver of
// garden-in-a-box.
func TestIntegrationAdminKubeconfigIssuerContract(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (KUBEBUILDER_ASSETS)")
	}
	ctx := context.Background()
	env, err := gardenbox.Start(ctx, gardenbox.Options{})
	if err != nil {
		t.Fatalf("start garden-in-a-box: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ns := env.Catalogue.ProjectNamespace()

	ready, err := env.NewShoot("ready", "aws")
	if err != nil {
		t.Fatal(err)
	}
	creating, err := env.NewShoot("creating", "aws")
	if err != nil {
		t.Fatal(err)
	}
	// The simulated gardenlet keeps this shoot in Create Processing: no address, no CA yet.
	creating.Annotations = map[string]string{gardenlet.AnnotationDuration: "1h"}
	for _, s := range []*gardencorev1beta1.Shoot{ready, creating} {
		if err := env.GardenClient.Create(ctx, s); err != nil {
			t.Fatalf("create shoot %s: %v", s.Name, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var s gardencorev1beta1.Shoot
		if err := env.GardenClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ready"}, &s); err == nil &&
			s.Status.LastOperation != nil && s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("shoot ready was not reconciled within 2m")
		}
		time.Sleep(200 * time.Millisecond)
	}

	c, err := gardener.NewIssuerClient(env.Garden)
	if err != nil {
		t.Fatal(err)
	}
	// Impersonating a user without any role gives credentials that may not request admin kubeconfigs.
	nobodyCfg := rest.CopyConfig(env.Garden)
	nobodyCfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody@example.com"}
	nobody, err := gardener.NewIssuerClient(nobodyCfg)
	if err != nil {
		t.Fatal(err)
	}
	contract.RunKubeconfigIssuerContract(t, func(t *testing.T) contract.IssuerFixture {
		return contract.IssuerFixture{
			Issuer:        gardener.NewAdminKubeconfigIssuer(c, ns),
			Now:           time.Now,
			ReadyShoot:    "ready",
			NotReadyShoot: "creating",
			MissingShoot:  "missing",
			Forbidden:     gardener.NewAdminKubeconfigIssuer(nobody, ns),
		}
	})
}
