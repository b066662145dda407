package gardener_test

import (
	"context"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener"
)

// TestIntegrationAdminKubeconfigIssuerContract runs the issuer contract against the real gardener-apiserver of
// garden-in-a-box.
func TestIntegrationAdminKubeconfigIssuerContract(t *testing.T) {
	ctx := context.Background()
	env := gardener.GardenBox(t) // shared with the other integration tests of this binary
	ns := env.Catalogue.ProjectNamespace()

	ready, err := env.NewShoot("ready", "aws")
	if err != nil {
		t.Fatal(err)
	}
	creating, err := env.NewShoot("creating", "aws")
	if err != nil {
		t.Fatal(err)
	}
	// Once both shoots are reconciled the simulated gardenlet leaves them alone; then the client CA of "creating"
	// is removed, which is what the apiserver sees of a shoot whose CA the gardenlet has not created yet.
	for _, s := range []*gardencorev1beta1.Shoot{ready, creating} {
		if err := env.GardenClient.Create(ctx, s); err != nil {
			t.Fatalf("create shoot %s: %v", s.Name, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, name := range []string{"ready", "creating"} {
		for {
			var s gardencorev1beta1.Shoot
			if err := env.GardenClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s); err == nil &&
				s.Status.LastOperation != nil && s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("shoot %s was not reconciled within 2m", name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	caClient := &gardencorev1beta1.InternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creating.ca-client"}}
	for {
		err := env.GardenClient.Delete(ctx, caClient)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("remove client CA of shoot creating: %v", err)
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
