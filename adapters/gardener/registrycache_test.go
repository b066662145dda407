package gardener

import (
	"errors"
	"maps"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// TestRegistryCacheViewReadsWhatTheGeneratorWrites: every cache the generator puts into a shoot is recognised as
// applied (same values, credentials resolved through spec.resources), and nothing else is.
func TestRegistryCacheViewReadsWhatTheGeneratorWrites(t *testing.T) {
	caches := []shoot.RegistryCache{
		{Upstream: "docker.io", RemoteURL: "https://registry-1.docker.io", VolumeSize: "20Gi", VolumeStorageClass: "fast",
			GarbageCollectionTTL: "168h", SecretReferenceName: "reg-cache-1", CredentialsSecret: "reg-cache-1",
			HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", TLS: ptr.To(false)},
		{Upstream: "quay.io"},
	}
	exts, err := extensions([]shoot.Extension{{Type: shoot.ExtensionRegistryCache, Config: shoot.RegistryCacheConfig{Caches: caches}}})
	if err != nil {
		t.Fatal(err)
	}
	s := &gardencorev1beta1.Shoot{Spec: gardencorev1beta1.ShootSpec{Extensions: exts, Resources: []gardencorev1beta1.NamedResourceReference{
		{Name: "reg-cache-1", ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: "reg-cache-1"}}}}}
	v := RegistryCacheView(s)
	if !v.Exists || len(v.Caches) != 2 || len(v.ReferencedSecrets) != 1 || v.ReferencedSecrets[0] != "reg-cache-1" {
		t.Fatalf("view %+v", v)
	}
	for i := range caches {
		if !registrycache.CacheEqual(caches[i], v.Caches[i]) {
			t.Errorf("cache %d read back as %+v, written %+v", i, v.Caches[i], caches[i])
		}
	}
	other := caches[0]
	other.CredentialsSecret = "reg-cache-2"
	if registrycache.CacheEqual(other, v.Caches[0]) {
		t.Error("a cache with other credentials counts as applied")
	}
	s.Spec.Extensions[0].Disabled = ptr.To(true)
	if v := RegistryCacheView(s); len(v.Caches) != 0 {
		t.Errorf("a disabled extension holds caches: %+v", v.Caches)
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
