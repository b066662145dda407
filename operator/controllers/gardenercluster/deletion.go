package gardenercluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// retrySecretGone is how soon a deletion is looked at again while the Secret is still being removed.
const retrySecretGone = 2 * time.Second

// ensureFinalizer adds the finalizer before anything is written, so a Secret never exists without the guarantee
// that it is removed with the GardenerCluster. GardenerClusters created by KEB before this operator get it here:
// that is how their Secrets are adopted.
func (r *Reconciler) ensureFinalizer(ctx context.Context, gc *imv1.GardenerCluster) error {
	if slices.Contains(gc.Finalizers, Finalizer) {
		return nil
	}
	// A JSON patch appends to the list without a resourceVersion, so it neither conflicts nor drops finalizers
	// others add meanwhile.
	op := fmt.Sprintf(`[{"op":"add","path":"/metadata/finalizers/-","value":%q}]`, Finalizer)
	if len(gc.Finalizers) == 0 {
		op = fmt.Sprintf(`[{"op":"add","path":"/metadata/finalizers","value":[%q]}]`, Finalizer)
	}
	if err := r.Client.Patch(ctx, gc.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(op))); err != nil {
		return fmt.Errorf("add finalizer to gardener cluster %s/%s: %w", gc.Namespace, gc.Name, err)
	}
	gc.Finalizers = append(gc.Finalizers, Finalizer)
	return nil
}

// removeFinalizer removes exactly our entry: it reads the list from the API server and patches "test that entry i is
// ours, then remove entry i", so a stale cache can neither resurrect finalizers others removed nor remove theirs.
func (r *Reconciler) removeFinalizer(ctx context.Context, gc *imv1.GardenerCluster) error {
	var live imv1.GardenerCluster
	if err := r.LiveReader.Get(ctx, client.ObjectKeyFromObject(gc), &live); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read gardener cluster %s/%s: %w", gc.Namespace, gc.Name, err)
	}
	i := slices.Index(live.Finalizers, Finalizer)
	if i < 0 {
		return nil
	}
	op := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%[1]d","value":%[2]q},{"op":"remove","path":"/metadata/finalizers/%[1]d"}]`, i, Finalizer)
	if err := r.Client.Patch(ctx, &live, client.RawPatch(types.JSONPatchType, []byte(op))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer from gardener cluster %s/%s: %w", gc.Namespace, gc.Name, err)
	}
	return nil
}

// finalize deletes the Secrets a GardenerCluster being deleted owns and removes the finalizer once they are
// observed gone. It also runs when the GardenerCluster was deleted while the operator was down: the finalizer kept
// it. A Secret the GardenerCluster names but does not own (another runtime's, a legacy Secret the operator never
// wrote, one in another namespace) is left alone.
func (r *Reconciler) finalize(ctx context.Context, gc *imv1.GardenerCluster) (ctrl.Result, error) {
	if !slices.Contains(gc.Finalizers, Finalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	primary := secretRef(gc)
	refs := []ports.SecretRef{primary}
	owned, err := r.Store.ListOwnedBy(ctx, gc.Namespace, gc.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, o := range owned {
		if o.Namespace != primary.Namespace || o.Name != primary.Name {
			refs = append(refs, o)
		}
	}
	for i, ref := range refs {
		md, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive)
		ex, err := existing(md, err)
		if err != nil {
			return ctrl.Result{}, err
		}
		if ex == nil {
			continue
		}
		if i == 0 {
			if verdict, err := kubeconfig.CheckSecret(gc.Namespace, gc.Name, ref.Namespace, ex); err != nil || verdict != kubeconfig.SecretOwned {
				log.Info("the named Secret is not this GardenerCluster's; it is kept", "secret", ref.String(), "why", fmt.Sprint(err))
				continue
			}
		}
		if err := r.Store.Delete(ctx, ref, ports.Precondition{UID: md.UID}); err != nil {
			before := gc.DeepCopy()
			msg := fmt.Sprintf("deleting kubeconfig Secret %s failed: %v", ref, err)
			setCondition(gc, imv1.GardenerClusterStateDeleting, metav1.ConditionFalse, ReasonFailedToDeleteSecret, msg)
			r.Recorder.Eventf(gc, nil, "Warning", ReasonFailedToDeleteSecret, "DeleteSecret", msg)
			perr := r.Client.Status().Patch(ctx, gc, client.MergeFrom(before))
			return ctrl.Result{}, errors.Join(fmt.Errorf("delete kubeconfig secret: %w", err), client.IgnoreNotFound(perr))
		}
		// The finalizer comes off only when the Secret is observed gone, not when the delete was merely accepted.
		if _, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive); err == nil {
			log.Info("kubeconfig Secret still being removed", "secret", ref.String())
			return ctrl.Result{RequeueAfter: retrySecretGone}, nil
		} else if !errors.Is(err, ports.ErrSecretNotFound) {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(gc, nil, "Normal", ReasonSecretDeleted, "DeleteSecret", "kubeconfig Secret %s deleted", ref)
	}
	forgetCluster(gc.Name)
	if err := r.removeFinalizer(ctx, gc); err != nil {
		return ctrl.Result{}, err
	}
	log.Info("kubeconfig Secrets deleted, finalizer removed")
	return ctrl.Result{}, nil
}

// deleteOrphans removes the Secrets of a GardenerCluster that no longer exists. This covers GardenerClusters that
// never got the finalizer (created by KEB and deleted while the operator was down, before adoption). The absence is
// confirmed with the API server first: the cache may simply not have seen a new GardenerCluster yet. Only Secrets
// the operator wrote for that GardenerCluster are found (ListOwnedBy).
func (r *Reconciler) deleteOrphans(ctx context.Context, key types.NamespacedName) error {
	forgetCluster(key.Name)
	refs, err := r.Store.ListOwnedBy(ctx, key.Namespace, key.Name)
	if err != nil || len(refs) == 0 {
		return err
	}
	var gc imv1.GardenerCluster
	if err := r.LiveReader.Get(ctx, key, &gc); err == nil {
		return nil // it exists: the cache was behind, and its own event will come
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("confirm gardener cluster %s is gone: %w", key, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("runtimeID", key.Name)
	for _, ref := range refs {
		md, err := r.Store.ReadMetadata(ctx, ref, ports.ReadLive)
		if errors.Is(err, ports.ErrSecretNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if err := r.Store.Delete(ctx, ref, ports.Precondition{UID: md.UID}); err != nil {
			return fmt.Errorf("delete orphaned kubeconfig secret: %w", err)
		}
		log.Info("deleted kubeconfig Secret of a GardenerCluster that no longer exists", "secret", ref.Namespace+"/"+ref.Name)
	}
	return nil
}
