package runtime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// Reaper deletes shoots whose deletion window has passed, forces stuck deletions Gardener allows it for, and
// restores shoots a person asked to restore. It reconciles shoots in the garden, one at a time per shoot.
type Reaper struct {
	// Garden reads shoots from the garden cache (for the gauges).
	Garden    client.Reader
	Namespace string
	Shoots    ports.Shoots
	// KCP is where restored Runtimes are created.
	KCP     client.Client
	Clock   interface{ Now() time.Time }
	Policy  deletion.Policy
	Metrics *Metrics
}

// Reconcile implements reconcile.Reconciler for shoots.
func (r *Reaper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", req.Name)
	defer r.refreshGauges(ctx)
	s := &gardencorev1beta1.Shoot{}
	if err := r.Garden.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get shoot %s: %w", req.Name, err)
	}
	d := deletion.Reap(gardener.Observe(s), r.Policy, r.Clock.Now())
	if d.Step != deletion.StepIgnore && d.Step != deletion.StepWaitWindow {
		log.Info("reaper", "step", d.Step, "message", d.Message, "runtimeID", s.Annotations[gardener.AnnotationDeletionRuntimeID])
	}
	var err error
	switch d.Action {
	case deletion.ReapDelete:
		if err = r.Shoots.Delete(ctx, s.Name); err == nil {
			r.Metrics.deletionsExecuted.Inc()
		}
	case deletion.ReapForceDelete:
		err = r.Shoots.ForceDelete(ctx, s.Name)
	case deletion.ReapRestore:
		err = Restore(ctx, r.Shoots, r.KCP, s.Name)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("%s shoot %s: %w", d.Action, s.Name, err)
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

func (r *Reaper) refreshGauges(ctx context.Context) {
	var list gardencorev1beta1.ShootList
	if err := r.Garden.List(ctx, &list, client.InNamespace(r.Namespace),
		client.MatchingLabels{gardener.LabelManagedBy: gardener.ManagedByValue}); err != nil {
		return
	}
	pending, stuck := 0, 0
	now := r.Clock.Now()
	for i := range list.Items {
		obs := gardener.Observe(&list.Items[i])
		if obs.Marks.PendingDeletion != nil {
			pending++
		}
		if deletion.Reap(obs, r.Policy, now).Stuck {
			stuck++
		}
	}
	r.Metrics.pendingDeletion.Set(float64(pending))
	r.Metrics.deletionsStuck.Set(float64(stuck))
}
