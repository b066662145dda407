package gardener

import (
	"errors"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// TestRegistryCacheView: the view of a shoot with registry caches (the golden shoot of a Runtime with caches) holds
// its caches, the Secrets its spec.resources reference, and whether Gardener reconciled it; which caches count as
// the generator's is translate.RegistryCaches' decision (its own test).
func TestRegistryCacheView(t *testing.T) {
	shoots, err := translate.LoadShoots("testdata/shoots")
	if err != nil {
		t.Fatal(err)
	}
	s := shoots["aws-registry-cache"]
	if s == nil {
		t.Fatal("no golden shoot aws-registry-cache")
	}
	v := RegistryCacheView(s)
	var secrets []string
	for _, r := range s.Spec.Resources {
		if r.ResourceRef.Kind == "Secret" {
			secrets = append(secrets, r.ResourceRef.Name)
		}
	}
	if !v.Exists || len(v.Caches) == 0 || !slices.Equal(v.ReferencedSecrets, secrets) || len(secrets) == 0 {
		t.Fatalf("view %+v; want the caches and the referenced Secrets %v", v, secrets)
	}
	if v.Reconciled != Observe(s).Reconciled() {
		t.Errorf("view says reconciled %v, the observation %v", v.Reconciled, Observe(s).Reconciled())
	}
}

// TestEnsureSecretNeverAdoptsASquatter: when the create finds the name taken, the existing Secret is used only when
// it is exactly the copy (labels of the same runtime and cache, immutable, the same data); a Secret placed under
// the name by someone else, or another runtime's copy, is ports.ErrCopyConflict.
func TestEnsureSecretNeverAdoptsASquatter(t *testing.T) {
	data := map[string][]byte{registrycache.KeyUsername: []byte("u"), registrycache.KeyPassword: []byte("p")}
	want := registrycache.GardenSecret{Name: registrycache.SecretPrefix + "x", RuntimeID: "rt-1", CacheUID: "uid-1", ShootName: "c-1", Data: data}
	copyLabels := map[string]string{wire.LabelManagedBy: wire.ManagedByValue, LabelRuntimeID: "rt-1", LabelCacheID: "uid-1", LabelShootName: "c-1"}
	secret := func(labels map[string]string, immutable bool, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-p", Name: want.Name, Labels: labels},
			Type: corev1.SecretTypeOpaque, Immutable: ptr.To(immutable), Data: data}
	}
	otherRuntime := maps.Clone(copyLabels)
	otherRuntime[LabelRuntimeID] = "rt-2"
	for _, tc := range []struct {
		reason   string
		existing *corev1.Secret
		conflict bool
	}{
		{"the operator's own copy is used", secret(copyLabels, true, data), false},
		{"a Secret without the labels is refused", secret(nil, true, data), true},
		{"another runtime's copy is refused", secret(otherRuntime, true, data), true},
		{"other data under the name is refused", secret(copyLabels, true, map[string][]byte{registrycache.KeyUsername: []byte("u"), registrycache.KeyPassword: []byte("q")}), true},
		{"a mutable Secret is refused", secret(copyLabels, false, data), true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			c := fakeclient.NewClientBuilder().WithObjects(tc.existing).Build()
			g := &RegistryCacheGarden{Live: c, Writer: c, Namespace: "garden-p"}
			created, err := g.EnsureSecret(t.Context(), want)
			if created || errors.Is(err, ports.ErrCopyConflict) != tc.conflict || (!tc.conflict && err != nil) {
				t.Errorf("created %v, err %v; want conflict %v", created, err, tc.conflict)
			}
			owned, err := g.OwnedCopies(t.Context(), "rt-1", []string{want.Name, "aws-credentials"})
			if err != nil {
				t.Fatal(err)
			}
			if ownLabels := tc.existing.Labels[LabelRuntimeID] == "rt-1"; (len(owned) == 1) != ownLabels {
				t.Errorf("owned copies %v", owned)
			}
		})
	}
}
