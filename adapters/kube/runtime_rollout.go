package kube

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RuntimeBootstrapRecords implements ports.RuntimeBootstrapLister over the manager's cache of Runtimes.
type RuntimeBootstrapRecords struct {
	// Cache reads the Runtimes (the manager's cached client; never the API server: the rollout walks the fleet
	// every few seconds).
	Cache client.Reader
}

var _ ports.RuntimeBootstrapLister = (*RuntimeBootstrapRecords)(nil)

// ListBootstrap implements ports.RuntimeBootstrapLister. The cached objects are read without a deep copy (nothing
// of them is kept or changed): one walk over 5,000 Runtimes allocates only the entries it returns.
func (r *RuntimeBootstrapRecords) ListBootstrap(ctx context.Context) ([]ports.RuntimeBootstrap, error) {
	var list imv1.RuntimeList
	if err := r.Cache.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, transient("list Runtimes", err)
	}
	out := make([]ports.RuntimeBootstrap, 0, len(list.Items))
	for i := range list.Items {
		rt := &list.Items[i]
		e := ports.RuntimeBootstrap{Namespace: rt.Namespace, RuntimeID: mapping.RuntimeID(rt), ShootName: rt.Spec.Shoot.Name,
			EverReady: rt.Status.ProvisioningCompleted, Deleting: rt.DeletionTimestamp != nil, GaveUp: rt.Status.State == imv1.RuntimeStateFailed}
		if rc := rt.Status.RuntimeConfiguration; rc != nil {
			e.Bootstrap = runtimeconfig.BootstrapRecord{Hash: rc.BootstrapHash, Failed: rc.BootstrapFailed}
		}
		out = append(out, e)
	}
	return out, nil
}
