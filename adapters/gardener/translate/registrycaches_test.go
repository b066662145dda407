package translate

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
)

// TestRegistryCachesReadWhatTheGeneratorWrites: every cache the generator puts into a shoot is recognised as
// applied (same values, credentials resolved through spec.resources), and nothing else is.
func TestRegistryCachesReadWhatTheGeneratorWrites(t *testing.T) {
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
	got := RegistryCaches(s)
	if len(got) != 2 {
		t.Fatalf("caches %+v", got)
	}
	for i := range caches {
		if !registrycache.CacheEqual(caches[i], got[i]) {
			t.Errorf("cache %d read back as %+v, written %+v", i, got[i], caches[i])
		}
	}
	other := caches[0]
	other.CredentialsSecret = "reg-cache-2"
	if registrycache.CacheEqual(other, got[0]) {
		t.Error("a cache with other credentials counts as applied")
	}
	s.Spec.Extensions[0].Disabled = ptr.To(true)
	if got := RegistryCaches(s); len(got) != 0 {
		t.Errorf("a disabled extension holds caches: %+v", got)
	}
}
