package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// RemovalResult says whether a GardenerCluster being deleted may go and what happened.
type RemovalResult struct {
	// Release is true once every Secret it owns is observed gone.
	Release bool
	// Status is set when a deletion failed (kubeconfig.DeleteFailed); Retry then asks for a retry.
	Status *kubeconfig.Status
	// Deleted are the Secrets removed in this pass; Kept the Secrets it names but does not own (left alone).
	Deleted, Kept []ports.SecretRef
	// StillThere is a Secret whose deletion was accepted but which is not gone yet (look again soon).
	StillThere *ports.SecretRef
}

// Remove deletes the Secrets the GardenerCluster of req (being deleted) owns, and releases it once they are
// observed gone. A Secret it names but does not own (another runtime's, a legacy Secret the operator never wrote,
// one in another namespace) is left alone; Secrets it owns elsewhere (it named another Secret before) are found
// through the store's owner records. Its own legacy Secret is deleted when the owner records list it: that is the
// Secret the previous infrastructure manager wrote for this GardenerCluster (its managed-by and cluster-name
// labels), which that manager deleted with the GardenerCluster; KEB's legacy Secret carries no such record and stays.
func (r *Rotator) Remove(ctx context.Context, req ports.KubeconfigRequest) (RemovalResult, error) {
	var res RemovalResult
	primary := req.Secret
	refs := []ports.SecretRef{primary}
	owned, err := r.Store.ListOwnedBy(ctx, req.Namespace, req.Name)
	if err != nil {
		return res, err
	}
	primaryRecorded := false
	for _, o := range owned {
		if o.Namespace != primary.Namespace || o.Name != primary.Name {
			refs = append(refs, o)
		} else {
			primaryRecorded = true
		}
	}
	for i, ref := range refs {
		md, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive)
		ex, err := existingSecret(md, err)
		if err != nil {
			return res, err
		}
		if ex == nil {
			continue
		}
		if i == 0 {
			verdict, err := kubeconfig.CheckClusterSecret(req.Namespace, req.Name, ref.Namespace, ref.Name, ex)
			if err != nil || (verdict != kubeconfig.SecretOwned && (verdict != kubeconfig.SecretLegacy || !primaryRecorded)) {
				res.Kept = append(res.Kept, ref)
				continue
			}
		}
		if err := r.Store.Delete(ctx, ref, ports.Precondition{UID: md.UID}); err != nil {
			st := kubeconfig.DeleteFailed(ref.String(), err.Error())
			res.Status = &st
			return res, nil
		}
		// Released only when the Secret is observed gone, not when the delete was merely accepted.
		if _, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive); err == nil {
			res.StillThere = &ref
			return res, nil
		} else if !errors.Is(err, ports.ErrSecretNotFound) {
			return res, err
		}
		res.Deleted = append(res.Deleted, ref)
	}
	res.Release = true
	return res, nil
}

// RemoveOrphans deletes the Secrets of a GardenerCluster that no longer exists: one deleted without the operator's
// finalizer (created by KEB and deleted while the operator was down, before adoption). The absence is confirmed
// with the API server first: the cache may simply not have seen a new GardenerCluster yet. Only Secrets written
// for that GardenerCluster are found (the store's owner records).
func (r *Rotator) RemoveOrphans(ctx context.Context, namespace, name string, live ports.KubeconfigRequests) ([]ports.SecretRef, error) {
	refs, err := r.Store.ListOwnedBy(ctx, namespace, name)
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	if _, exists, err := live.Confirm(ctx, namespace, name); err != nil {
		return nil, fmt.Errorf("confirm gardener cluster %s/%s is gone: %w", namespace, name, err)
	} else if exists {
		return nil, nil // the cache was behind, and its own event will come
	}
	var deleted []ports.SecretRef
	for _, ref := range refs {
		md, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive)
		if errors.Is(err, ports.ErrSecretNotFound) {
			continue
		} else if err != nil {
			return deleted, err
		}
		if err := r.Store.Delete(ctx, ref, ports.Precondition{UID: md.UID}); err != nil {
			return deleted, fmt.Errorf("delete orphaned kubeconfig secret: %w", err)
		}
		deleted = append(deleted, ref)
	}
	return deleted, nil
}
