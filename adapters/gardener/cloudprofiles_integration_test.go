package gardener

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
)

// TestCloudProfilesContractIntegration runs the CloudProfiles contract against the real adapter on garden-in-a-box:
// each profile is a copy of the sandbox's AWS profile with the regions the contract asks for, created in the garden
// (so gardener-apiserver's validation of cloud profiles applies to what the contract reads).
func TestCloudProfilesContractIntegration(t *testing.T) {
	env := GardenBox(t)
	base := &gardencorev1beta1.CloudProfile{}
	require.NoError(t, env.GardenClient.Get(t.Context(), client.ObjectKey{Name: "aws"}, base), "the sandbox catalogue has the aws cloud profile")
	adapter := &Shoots{Client: env.GardenClient, Live: env.GardenClient, Namespace: env.Catalogue.ProjectNamespace()}
	contract.RunCloudProfilesContract(t, func(t *testing.T) contract.CloudProfilesFixture {
		return contract.CloudProfilesFixture{Profiles: adapter, AddProfile: func(t *testing.T, name string, regions map[string][]string) {
			t.Helper()
			cp := base.DeepCopy()
			cp.ObjectMeta = metav1.ObjectMeta{Name: name}
			cp.Spec.Regions = nil
			for region, zones := range regions {
				r := gardencorev1beta1.Region{Name: region}
				for _, z := range zones {
					r.Zones = append(r.Zones, gardencorev1beta1.AvailabilityZone{Name: z})
				}
				cp.Spec.Regions = append(cp.Spec.Regions, r)
			}
			require.NoError(t, env.GardenClient.Create(t.Context(), cp))
			t.Cleanup(func() { _ = env.GardenClient.Delete(context.Background(), cp) }) // t.Context() is done by then
		}}
	})
}
