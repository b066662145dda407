package auditlogpool

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Reconciler looks after one tenant of the pool: the skeleton with this package's hooks on the AuditLog resource
// (unstructured: the operator does not own its API). It writes no status and adds no finalizer; a tenant that is
// gone goes through Keep too (its reservations are nobody's then).
type Reconciler = skeleton.Reconciler[*unstructured.Unstructured, string, usecase.KeepResult]

type state = skeleton.State[*unstructured.Unstructured]

// NewReconciler builds the reconciler on the manager's clients, deps (Clock, Kind, TenantName) and the keeper use
// case. Events are logged, not recorded: a cluster-scoped pool has no namespace to record them in.
func NewReconciler(c client.Client, live client.Reader, deps Deps, keep *usecase.AuditLogKeeper, m *Metrics) *Reconciler {
	return &Reconciler{Client: c, Live: live, Clock: deps.Clock,
		New: func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(deps.Kind)
			return u
		},
		Hooks: &hooks{keep: keep, tenantName: deps.TenantName, metrics: m}}
}

type hooks struct {
	keep       *usecase.AuditLogKeeper
	tenantName func(namespace, name string) string
	metrics    *Metrics
}

var (
	_ skeleton.Hooks[*unstructured.Unstructured, string, usecase.KeepResult] = (*hooks)(nil)
	_ skeleton.GoneHandler[*unstructured.Unstructured]                       = (*hooks)(nil)
)

// Observe implements skeleton.Hooks: the tenant's name in the pool.
func (h *hooks) Observe(s *state) string {
	return h.tenantName(s.Key().Namespace, s.Key().Name)
}

// Act implements skeleton.Hooks.
func (h *hooks) Act(ctx context.Context, _ *state, name string, now time.Time) (usecase.KeepResult, error) {
	return h.keep.Keep(ctx, name, now)
}

// Status implements skeleton.Hooks; nothing of the AuditLog's status is written. A failed Keep is an outcome too
// (metrics, a rate-limited retry). Without a finalizer, a tenant being deleted is kept like any other.
func (h *hooks) Status(ctx context.Context, s *state, res usecase.KeepResult, err error, _ time.Time) skeleton.Result {
	return h.result(ctx, h.Observe(s), res, err)
}

// Gone implements skeleton.GoneHandler.
func (h *hooks) Gone(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	name := h.Observe(s)
	res, err := h.Act(ctx, s, name, now)
	return h.result(ctx, name, res, err), nil
}

func (h *hooks) result(ctx context.Context, name string, res usecase.KeepResult, err error) skeleton.Result {
	log := ctrl.LoggerFrom(ctx).WithValues("auditLog", name)
	if res.RuntimeID != "" {
		log = log.WithValues("runtimeID", res.RuntimeID)
	}
	out := skeleton.Result{}
	for _, e := range res.Events {
		h.metrics.Count(e.Reason)
		log.Info("audit log pool", "event", e.Reason, "message", e.Message, "warning", e.Warning)
	}
	if err != nil {
		out.Retry = fmt.Errorf("audit log tenant %s: %w", name, err)
		return out
	}
	d := res.Decision
	if d.Message != "" {
		log.V(1).Info("audit log pool", "action", d.Action, "message", d.Message)
	}
	switch {
	case d.RequeueAfter > 0:
		out.RequeueAfter = d.RequeueAfter
	case res.RuntimeID != "" && d.Action != auditlog.KeepRelease:
		out.RequeueAfter = Resync
	}
	return out
}
