package auditlog

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/controllers/setup"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Reconciler looks after one tenant of the pool: the skeleton with this package's hooks on the AuditLog resource
// (unstructured: the operator does not own its API). It writes no status and adds no finalizer; a tenant that is
// gone goes through Keep too (its reservations are nobody's then).
type Reconciler = skeleton.Reconciler[*unstructured.Unstructured, string, kept]

type state = skeleton.State[*unstructured.Unstructured]

// kept is one Keep: its result and, when it failed, why.
type kept struct {
	res usecase.KeepResult
	err error
}

// NewReconciler builds the reconciler on the manager's clients, the pool's ports and the keeper use case. Events
// are logged, not recorded: a cluster-scoped pool has no namespace to record them in.
func NewReconciler(c client.Client, live client.Reader, clock ports.Clock, al *setup.AuditLogPorts, keep *usecase.AuditLogKeeper,
	m *Metrics) *Reconciler {
	return &Reconciler{Client: c, Live: live, Clock: clock,
		New: func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(al.Kind)
			return u
		},
		Hooks: &hooks{keep: keep, tenantName: al.TenantName, metrics: m}}
}

type hooks struct {
	keep       *usecase.AuditLogKeeper
	tenantName func(namespace, name string) string
	metrics    *Metrics
}

var (
	_ skeleton.Hooks[*unstructured.Unstructured, string, kept] = (*hooks)(nil)
	_ skeleton.GoneHandler[*unstructured.Unstructured]         = (*hooks)(nil)
)

// Observe implements skeleton.Hooks: the tenant's name in the pool.
func (h *hooks) Observe(_ context.Context, s *state) (string, error) {
	return h.tenantName(s.Key().Namespace, s.Key().Name), nil
}

// Act implements skeleton.Hooks; a failed Keep is an outcome (metrics, a rate-limited retry).
func (h *hooks) Act(ctx context.Context, _ *state, name string, now time.Time) (kept, error) {
	res, err := h.keep.Keep(ctx, name, now)
	return kept{res: res, err: err}, nil
}

// Status implements skeleton.Hooks; nothing of the AuditLog's status is written.
func (h *hooks) Status(ctx context.Context, s *state, k kept, _ time.Time) skeleton.Result {
	return h.result(ctx, h.tenantName(s.Key().Namespace, s.Key().Name), k)
}

// Finalize implements skeleton.Hooks; without a finalizer it is never called, a tenant being deleted is kept
// like any other.
func (h *hooks) Finalize(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	return h.Gone(ctx, s, now)
}

// Gone implements skeleton.GoneHandler.
func (h *hooks) Gone(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	name := h.tenantName(s.Key().Namespace, s.Key().Name)
	k, _ := h.Act(ctx, s, name, now)
	return h.result(ctx, name, k), nil
}

func (h *hooks) result(ctx context.Context, name string, k kept) skeleton.Result {
	log := ctrl.LoggerFrom(ctx).WithValues("auditLog", name)
	res := k.res
	if res.RuntimeID != "" {
		log = log.WithValues("runtimeID", res.RuntimeID)
	}
	out := skeleton.Result{}
	for _, e := range res.Events {
		h.metrics.Count(e.Reason)
		log.Info("audit log pool", "event", e.Reason, "message", e.Message, "warning", e.Warning)
	}
	if k.err != nil {
		out.Retry = fmt.Errorf("audit log tenant %s: %w", name, k.err)
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
