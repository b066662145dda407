package gardener

import (
	"context"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

var _ ports.CloudProfiles = (*Shoots)(nil)

// RegionZones implements ports.CloudProfiles: the zones of region in the named CloudProfile, in the profile's
// order. Read live by name: cloud profiles are cluster-scoped (outside the project cache), and the operator asks only
// while a pool without zones is not in its shoot yet, so a cache of every profile would cost more than it saves.
func (c *Shoots) RegionZones(ctx context.Context, profile, region string) ([]string, error) {
	cp := &gardencorev1beta1.CloudProfile{}
	err := c.Live.Get(ctx, client.ObjectKey{Name: profile}, cp)
	if apierrors.IsNotFound(err) {
		c.count("get", nil)
		return nil, nil
	}
	if err := c.record("get", classify("get cloud profile "+profile, err)); err != nil {
		return nil, err
	}
	for _, r := range cp.Spec.Regions {
		if r.Name != region {
			continue
		}
		zones := make([]string, 0, len(r.Zones))
		for _, z := range r.Zones {
			zones = append(zones, z.Name)
		}
		return zones, nil
	}
	return nil, nil
}
