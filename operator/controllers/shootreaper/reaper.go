package shootreaper

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Reaper is the controller of the reaper use case: the skeleton on the shoots of the garden (no finalizer, no
// status, read-only: the use case reads the shoot through its ports and re-reads it live before any write), one
// reconcile at a time per shoot. The shoots of deleted runtimes have no Runtime left to record events
// on: what happens is logged (key "event", which runbooks search for) and counted.
type Reaper = skeleton.Reconciler[*gardencorev1beta1.Shoot, string, usecase.ReapResult]

// NewReaper builds the reaper on the garden's clients.
func NewReaper(garden client.Client, live client.Reader, clock ports.Clock, m *Metrics, reap *usecase.Reaper) *Reaper {
	return &Reaper{Client: garden, Live: live, Clock: clock, ReadOnly: true,
		New:   func() *gardencorev1beta1.Shoot { return &gardencorev1beta1.Shoot{} },
		Hooks: &reaperHooks{reap: reap, metrics: m}}
}

// reaperEvents enqueues the one shoot an event is about: the work of a shoot event does not grow with the fleet.
// Shoots waiting for their window come back through the RequeueAfter of their last pass (the due time), not
// through events of other shoots.
func reaperEvents() handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	return &handler.TypedEnqueueRequestForObject[*gardencorev1beta1.Shoot]{}
}

// ShootUpdates tells what an update event of a cached shoot changed of what the reaper reads (in the operator
// gardener.ShootUpdates, which knows what the garden cache keeps).
type ShootUpdates interface {
	// Changed reports whether anything read changed, and progressOnly when that is only the progress of an
	// operation still running (its progress, description and time).
	Changed(old, new *gardencorev1beta1.Shoot) (changed, progressOnly bool)
}

// shootChanged lets through the updates of shoots that change what the reaper reads (its marks, deletion,
// existence), creations and deletions: neither Gardener's status writes of what the cache trims nor the progress
// of a running operation (the reaper decides on neither). Without updates every update passes.
func shootChanged(updates ShootUpdates) predicate.TypedPredicate[*gardencorev1beta1.Shoot] {
	if updates == nil {
		return predicate.TypedFuncs[*gardencorev1beta1.Shoot]{}
	}
	return predicate.TypedFuncs[*gardencorev1beta1.Shoot]{
		UpdateFunc: func(e event.TypedUpdateEvent[*gardencorev1beta1.Shoot]) bool {
			changed, progressOnly := updates.Changed(e.ObjectOld, e.ObjectNew)
			return changed && !progressOnly
		},
	}
}

// managedShoots lets through the events of shoots that carry the operator's managed-by mark.
func managedShoots() predicate.TypedPredicate[*gardencorev1beta1.Shoot] {
	return predicate.NewTypedPredicateFuncs(func(s *gardencorev1beta1.Shoot) bool {
		return s.Labels[wire.LabelManagedBy] == wire.ManagedByValue
	})
}

type reaperHooks struct {
	reap    *usecase.Reaper
	metrics *Metrics
}

type shootState = skeleton.State[*gardencorev1beta1.Shoot]

// Observe implements skeleton.Hooks: the use case reads the shoot through its ports, by name.
func (h *reaperHooks) Observe(s *shootState) string {
	return s.Obj.Name
}

// Act implements skeleton.Hooks.
func (h *reaperHooks) Act(ctx context.Context, _ *shootState, name string, now time.Time) (usecase.ReapResult, error) {
	return h.reap.Reap(ctx, name, now)
}

// Status implements skeleton.Hooks: shoots get no status from the operator; events are logged and counted, those
// of a pass that failed too (what happened before the error).
func (h *reaperHooks) Status(ctx context.Context, s *shootState, res usecase.ReapResult, err error, _ time.Time) skeleton.Result {
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", s.Obj.Name)
	d := res.Decision
	if pd := res.Shoot.Marks.PendingDeletion; pd != nil {
		log = log.WithValues("runtimeID", pd.RuntimeID)
	}
	for _, e := range res.Events {
		h.metrics.count(e.Reason)
		log.Info("reaper", "event", e.Reason, "message", e.Message, "warning", e.Warning)
	}
	if d.Step != deletion.StepIgnore && d.Step != deletion.StepWaitWindow && len(res.Events) == 0 {
		log.V(1).Info("reaper", "step", d.Step, "message", d.Message)
	}
	if err != nil {
		return skeleton.Result{Retry: fmt.Errorf("reap shoot %s: %w", s.Obj.Name, err)}
	}
	return skeleton.Result{RequeueAfter: d.RequeueAfter}
}

// Gone implements skeleton.GoneHandler: a shoot that is gone needs no KCP deletion record any more (the use case
// confirms it gone live before removing them).
func (h *reaperHooks) Gone(ctx context.Context, s *shootState, now time.Time) (skeleton.Result, error) {
	if _, err := h.reap.Reap(ctx, s.Key().Name, now); err != nil {
		return skeleton.Result{Retry: fmt.Errorf("forget shoot %s: %w", s.Key().Name, err)}, nil
	}
	return skeleton.Result{}, nil
}

// MigrationRetry is how soon a failed migration of deletion records is tried again.
const MigrationRetry = 30 * time.Second

// migrateRecords runs the one-time migration to KCP deletion records (usecase.Reaper.MigrateRecords) on the leader,
// once the garden cache is synced (it lists the shoots from it), until it succeeded. Until then the reaper keeps
// every shoot marked by an older operator version (NoKCPDeletionRecord).
func migrateRecords(garden cache.Cache, shoots ports.ShootLister, clock ports.Clock, reap *usecase.Reaper) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		log := ctrl.LoggerFrom(ctx).WithName("deletion-record-migration")
		if !garden.WaitForCacheSync(ctx) {
			return nil // stopping
		}
		for {
			n, err := reap.MigrateRecords(ctx, shoots, clock.Now())
			if err == nil {
				if n > 0 {
					log.Info("deletion records migrated to the KCP", "records", n)
				}
				return nil
			}
			log.Error(err, "migrating deletion records to the KCP; trying again", "after", MigrationRetry.String())
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(MigrationRetry):
			}
		}
	})
}
