package gardener

import (
	"maps"
	"testing"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	"github.com/kyma-project/kim/operator/config"
)

// TestCredentialsBindingsContractIntegration runs the CredentialsBindings contract on the real gardener-apiserver:
// CredentialsBindings as KEB's pool holds them (referencing a catalogue Secret), shoots that name them through
// Gardener's admission.
func TestCredentialsBindingsContractIntegration(t *testing.T) {
	env := GardenBox(t)
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt := loadRuntime(t, "testdata/runtimes/aws.yaml")
	shoots := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	adapter := &CredentialsBindings{Live: c, Writer: c, Namespace: ns}
	get := func(t *testing.T, name string) *securityv1alpha1.CredentialsBinding {
		t.Helper()
		b := &securityv1alpha1.CredentialsBinding{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			t.Fatalf("get credentials binding %s: %v", name, err)
		}
		return b
	}
	contract.RunCredentialsBindingsContract(t, func(t *testing.T) contract.BindingsFixture {
		return contract.BindingsFixture{
			Bindings: adapter,
			Create: func(t *testing.T, labels map[string]string) string {
				b := &securityv1alpha1.CredentialsBinding{
					ObjectMeta:     metav1.ObjectMeta{GenerateName: "cbc-", Namespace: ns, Labels: maps.Clone(labels)},
					Provider:       securityv1alpha1.CredentialsBindingProvider{Type: "aws"},
					CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "aws-kyma-1", Namespace: ns},
				}
				if err := c.Create(t.Context(), b); err != nil {
					t.Fatalf("create credentials binding: %v", err)
				}
				t.Cleanup(func() { _ = c.Delete(t.Context(), b) })
				return b.Name
			},
			Labels: func(t *testing.T, name string) map[string]string {
				l := get(t, name).Labels
				if l == nil {
					l = map[string]string{}
				}
				return l
			},
			Relabel: func(t *testing.T, name, key, value string) {
				b := get(t, name)
				if value == "" {
					delete(b.Labels, key)
				} else {
					metav1.SetMetaDataLabel(&b.ObjectMeta, key, value)
				}
				if err := c.Update(t.Context(), b); err != nil {
					t.Fatalf("relabel credentials binding %s: %v", name, err)
				}
			},
			PutShoot: func(t *testing.T, shootName, binding string) {
				r := rt.DeepCopy()
				r.Spec.Shoot.Name, r.Spec.Shoot.SecretBindingName = shootName, binding
				spec, err := shoot.Generate(mapping.Runtime(r), cfg.ShootConfig())
				if err != nil {
					t.Fatal(err)
				}
				spec.Namespace = ns
				if err := shoots.applyAuthConfigMap(t.Context(), ports.ShootApply{Spec: spec}); err != nil {
					t.Fatal(err)
				}
				s, err := translate.ToShoot(spec)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Create(t.Context(), s); err != nil {
					t.Fatalf("create shoot %s naming %s: %v", shootName, binding, err)
				}
				t.Cleanup(func() { deleteShoot(t, c, s) })
			},
		}
	})
}
