package gardener

import (
	"context"
	"slices"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

var _ ports.ShootLister = (*Shoots)(nil)

// ListManaged implements ports.ShootLister from the client's cache (one list, no deep copies).
func (c *Shoots) ListManaged(ctx context.Context) ([]shootstate.Shoot, error) {
	var list gardencorev1beta1.ShootList
	if err := c.Client.List(ctx, &list, client.InNamespace(c.Namespace), client.UnsafeDisableDeepCopy,
		client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue}); err != nil {
		return nil, classify("list shoots", err)
	}
	out := make([]shootstate.Shoot, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, Observe(&list.Items[i]))
	}
	slices.SortFunc(out, func(a, b shootstate.Shoot) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
