package mapping

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The one mapping of a registry cache configuration: what the Runtime controller generates shoots from and what the
// registry cache controller reads and writes (adapters/kube) are the same, both ways.
func TestRegistryCacheMapsBothWays(t *testing.T) {
	for _, tc := range []struct {
		reason string
		cr     imv1.RegistryCacheConfig
		domain shoot.RegistryCache
	}{
		{"only the upstream", imv1.RegistryCacheConfig{Upstream: "docker.io"}, shoot.RegistryCache{Upstream: "docker.io"}},
		{"every field; the credentials are copied under the reference's name",
			imv1.RegistryCacheConfig{Upstream: "ghcr.io", RemoteURL: ptr.To("https://ghcr.io"), SecretReferenceName: ptr.To("creds"),
				Volume:            &imv1.RegistryCacheVolume{Size: ptr.To("10Gi"), StorageClassName: ptr.To("fast")},
				GarbageCollection: &imv1.RegistryCacheGarbageCollection{TTL: "168h"},
				Proxy:             &imv1.RegistryCacheProxy{HTTPProxy: ptr.To("http://p:3128"), HTTPSProxy: ptr.To("http://p:3129")},
				HTTP:              &imv1.RegistryCacheHTTP{TLS: ptr.To(false)}},
			shoot.RegistryCache{Upstream: "ghcr.io", RemoteURL: "https://ghcr.io", SecretReferenceName: "creds", CredentialsSecret: "creds",
				VolumeSize: "10Gi", VolumeStorageClass: "fast", GarbageCollectionTTL: "168h", HTTPProxy: "http://p:3128",
				HTTPSProxy: "http://p:3129", TLS: ptr.To(false)}},
		{"a volume with only a size", imv1.RegistryCacheConfig{Upstream: "quay.io", Volume: &imv1.RegistryCacheVolume{Size: ptr.To("1Gi")}},
			shoot.RegistryCache{Upstream: "quay.io", VolumeSize: "1Gi"}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.domain, RegistryCache(tc.cr)); diff != "" {
				t.Errorf("RegistryCache (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.cr, RegistryCacheConfig(tc.domain)); diff != "" {
				t.Errorf("RegistryCacheConfig (-want +got):\n%s", diff)
			}
			rt := Runtime(&imv1.Runtime{Spec: imv1.RuntimeSpec{ImageRegistryCache: []imv1.ImageRegistryCache{{Name: "keb", Config: tc.cr}}}})
			if diff := cmp.Diff([]shoot.RegistryCache{tc.domain}, rt.RegistryCaches); diff != "" {
				t.Errorf("Runtime (-want +got):\n%s", diff)
			}
		})
	}
}
