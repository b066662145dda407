package gardener

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	"github.com/kyma-project/kim/operator/config"
)

// TestCredentialsMigratorContractIntegration runs the migration contract on the real gardener-apiserver: shoots
// created with a SecretBinding (as the previous system did, Kubernetes below 1.34) are switched to the
// CredentialsBinding that references the same Secret; Gardener's own admission refuses other credentials.
func TestCredentialsMigratorContractIntegration(t *testing.T) {
	env := GardenBox(t)
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	// The catalogue's CredentialsBinding aws-kyma-1 references Secret aws-kyma-1; a SecretBinding to the same Secret.
	legacy := &gardencorev1beta1.SecretBinding{ //nolint:staticcheck // the legacy object under test
		ObjectMeta: metav1.ObjectMeta{Name: "aws-kyma-1-legacy", Namespace: ns},
		SecretRef:  corev1.SecretReference{Name: "aws-kyma-1", Namespace: ns},
		Provider:   &gardencorev1beta1.SecretBindingProvider{Type: "aws"}, //nolint:staticcheck // see above
	}
	if err := c.Create(t.Context(), legacy); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	rt := loadRuntime(t, "testdata/runtimes/aws.yaml")
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	contract.RunCredentialsMigratorContract(t, func(t *testing.T) contract.CredentialsMigratorFixture {
		return contract.CredentialsMigratorFixture{
			Migrator: adapter,
			PutLegacy: func(t *testing.T, name string, managed bool) string {
				r := rt.DeepCopy()
				r.Spec.Shoot.Name = name
				spec, err := shoot.Generate(mapping.Runtime(r), cfg.ShootConfig())
				if err != nil {
					t.Fatal(err)
				}
				spec.Namespace = ns
				if err := adapter.applyAuthConfigMap(t.Context(), ports.ShootApply{Spec: spec}); err != nil {
					t.Fatal(err)
				}
				s, err := translate.ToShoot(spec)
				if err != nil {
					t.Fatal(err)
				}
				s.Spec.CredentialsBindingName = nil
				s.Spec.SecretBindingName = ptr.To(legacy.Name) //nolint:staticcheck // the legacy field under test
				s.Labels = map[string]string{}
				if managed {
					s.Labels[wire.LabelManagedBy] = wire.ManagedByValue
				}
				if err := c.Create(t.Context(), s); err != nil {
					t.Fatalf("create legacy shoot %s: %v", name, err)
				}
				t.Cleanup(func() { deleteShoot(t, c, s) })
				return "aws-kyma-1"
			},
			Bindings: func(t *testing.T, name string) (string, string) {
				s := getShoot(t, c, ns, name)
				return ptr.Deref(s.Spec.SecretBindingName, ""), ptr.Deref(s.Spec.CredentialsBindingName, "") //nolint:staticcheck // see above
			},
			OtherCredentials: "aws-kyma-eu",
		}
	})
}

// deleteShoot removes a test shoot with Gardener's deletion confirmation, so names can be reused.
func deleteShoot(t *testing.T, c client.Client, s *gardencorev1beta1.Shoot) {
	t.Helper()
	fresh := &gardencorev1beta1.Shoot{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(s), fresh); err != nil {
		return
	}
	patch := client.MergeFrom(fresh.DeepCopy())
	metav1.SetMetaDataAnnotation(&fresh.ObjectMeta, "confirmation.gardener.cloud/deletion", "true")
	if err := c.Patch(t.Context(), fresh, patch); err == nil {
		_ = c.Delete(t.Context(), fresh)
	}
}
