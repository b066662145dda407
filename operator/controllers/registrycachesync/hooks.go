package registrycachesync

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Reconciler syncs one runtime's registry caches: the skeleton with this package's hooks. It writes no status of
// the Runtime (the Runtime controller owns it) and adds no finalizer: a Runtime that is gone is the sync's too
// (Gone), whose garden copies it collects.
type Reconciler = skeleton.Reconciler[*imv1.Runtime, ports.RuntimeRef, usecase.RegistryCacheResult]

type state = skeleton.State[*imv1.Runtime]

// NewReconciler builds the reconciler on the manager's clients, the clock and the sync use case.
func NewReconciler(c client.Client, live client.Reader, clock ports.Clock, sync *usecase.RegistryCacheSync, m *Metrics,
	recorder events.EventRecorder) *Reconciler {
	return &Reconciler{Client: c, Live: live, Clock: clock, Recorder: recorder,
		New:   func() *imv1.Runtime { return &imv1.Runtime{} },
		Hooks: &hooks{sync: sync, metrics: m}}
}

type hooks struct {
	sync    *usecase.RegistryCacheSync
	metrics *Metrics
}

var (
	_ skeleton.Hooks[*imv1.Runtime, ports.RuntimeRef, usecase.RegistryCacheResult] = (*hooks)(nil)
	_ skeleton.GoneHandler[*imv1.Runtime]                                          = (*hooks)(nil)
	_ skeleton.LogKeys[*imv1.Runtime]                                              = (*hooks)(nil)
)

// LogValues implements skeleton.LogKeys.
func (*hooks) LogValues(rt *imv1.Runtime) []any { return []any{"runtimeID", mapping.RuntimeID(rt)} }

// Observe implements skeleton.Hooks.
func (*hooks) Observe(s *state) ports.RuntimeRef {
	return ports.RuntimeRef{Namespace: s.Key().Namespace, RuntimeID: s.Key().Name}
}

// Act implements skeleton.Hooks.
func (h *hooks) Act(ctx context.Context, _ *state, ref ports.RuntimeRef, now time.Time) (usecase.RegistryCacheResult, error) {
	return h.sync.Sync(ctx, ref, now)
}

// Status implements skeleton.Hooks. Nothing of the Runtime's status changes; a failed sync is an outcome too
// (metrics, events, a rate-limited retry). Without a finalizer, a Runtime being deleted goes through Act (its
// copies are collected).
func (h *hooks) Status(ctx context.Context, s *state, res usecase.RegistryCacheResult, err error, _ time.Time) skeleton.Result {
	return h.result(ctx, s.Key(), res, err)
}

// Gone implements skeleton.GoneHandler: the garden copies of a Runtime that is gone are collected (the sweeper
// enqueues runtimes that still have copies).
func (h *hooks) Gone(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("runtimeID", s.Key().Name))
	res, err := h.Act(ctx, s, h.Observe(s), now)
	return h.result(ctx, s.Key(), res, err), nil
}

func (h *hooks) result(ctx context.Context, key client.ObjectKey, res usecase.RegistryCacheResult, err error) skeleton.Result {
	h.metrics.Observe(res)
	out := skeleton.Result{Events: res.Events}
	log := ctrl.LoggerFrom(ctx)
	if err != nil {
		log.Error(err, "registry cache sync failed", "outcome", res.Outcome)
		out.Retry = fmt.Errorf("registry cache sync of runtime %s: %w", key.Name, err)
		return out
	}
	log.V(1).Info("registry cache sync", "outcome", res.Outcome, "caches", res.Caches, "refused", res.Refused,
		"secretsCreated", res.SecretsCreated, "secretsDeleted", res.SecretsDeleted)
	if res.RequeueAfter > 0 {
		out.RequeueAfter = jitter(key.Name, res.RequeueAfter)
	}
	return out
}
