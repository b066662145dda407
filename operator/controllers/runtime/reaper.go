package runtime

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// Reaper is the controller of the reaper use case: it reconciles shoots in the garden, one at a time per shoot.
// The shoots of deleted runtimes have no Runtime left to record events on: what happens is logged and counted.
type Reaper struct {
	Reap    *usecase.Reaper
	Clock   ports.Clock
	Metrics *Metrics
}

// Reconcile implements reconcile.Reconciler for shoots.
func (r *Reaper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", req.Name)
	res, err := r.Reap.Reap(ctx, req.Name, r.Clock.Now())
	d := res.Decision
	if pd := res.Shoot.Marks.PendingDeletion; pd != nil {
		log = log.WithValues("runtimeID", pd.RuntimeID)
	}
	for _, e := range res.Events {
		r.Metrics.count(e.Reason)
		log.Info("reaper", "event", e.Reason, "message", e.Message, "warning", e.Warning)
	}
	if d.Step != deletion.StepIgnore && d.Step != deletion.StepWaitWindow && len(res.Events) == 0 {
		log.V(1).Info("reaper", "step", d.Step, "message", d.Message)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reap shoot %s: %w", req.Name, err)
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}
