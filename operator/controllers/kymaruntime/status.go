package kymaruntime

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// setStatus writes the result of a provisioning pass into the Runtime's status (patched once by the skeleton): the
// state and the Ready condition from the decision, the other conditions the observation supports, the record of
// the configuration inside the runtime, and Gardener's last operation.
func setStatus(rt *imv1.Runtime, res usecase.ProvisionResult, now time.Time) {
	st, d := &rt.Status, res.Decision
	st.State = imv1.RuntimeState(d.State)
	st.ObservedGeneration = rt.Generation
	status := metav1.ConditionFalse
	if d.State == lifecycle.StateReady {
		status = metav1.ConditionTrue
		st.ProvisioningCompleted = true
	}
	setCondition(st, metav1.Condition{Type: imv1.ConditionReady, Status: status, Reason: string(d.Reason),
		Message: d.Message, ObservedGeneration: rt.Generation}, now)
	setKStatus(st, d, rt.Generation, now)
	for _, c := range lifecycle.Conditions(res.Input, res.Configuration) {
		cs := metav1.ConditionFalse
		switch {
		case c.Unknown:
			cs = metav1.ConditionUnknown
		case c.Status:
			cs = metav1.ConditionTrue
		}
		setCondition(st, metav1.Condition{Type: c.Type, Status: cs, Reason: c.Reason, Message: c.Message, ObservedGeneration: rt.Generation}, now)
	}
	if !res.Input.Access.Configuration.Bootstrap {
		skeleton.RemoveCondition(&st.Conditions, lifecycle.ConditionBootstrapped)
	}
	// The previous manager's conditions of features a runtime may stop using.
	if res.Input.Intent.DedicatedAuditLog == "" {
		skeleton.RemoveCondition(&st.Conditions, lifecycle.ConditionCustomAuditLogConfigured)
	}
	if res.Input.Intent.RegistryCaches == 0 {
		skeleton.RemoveCondition(&st.Conditions, lifecycle.ConditionRegistryCacheConfigured)
	}
	if res.Input.Intent.AdoptionHold == "" {
		skeleton.RemoveCondition(&st.Conditions, lifecycle.ConditionAdoptionReviewRequired)
	}
	if res.Input.Intent.AuditLogKept == "" {
		skeleton.RemoveCondition(&st.Conditions, lifecycle.ConditionAuditLogKept)
	}
	skeleton.RemoveCondition(&st.Conditions, conditionRuntimeConfigured)
	if c := res.Configured; c.Hash != "" || c.Bootstrap.Hash != "" {
		// A bootstrap attempt is recorded before the configuration is first reached: a new runtime's failure counts.
		st.RuntimeConfiguration = &imv1.RuntimeConfigurationStatus{Hash: c.Hash, AppliedAt: metaTime(c.AppliedAt),
			ShootReconciledAt: metaTime(c.ShootReconciledAt), BootstrapHash: c.Bootstrap.Hash, BootstrapFailed: c.Bootstrap.Failed}
	}
	if res.ShootInSyncRecord != "" {
		// Kept until a later comparison finds the shoot in sync again: a record answers only for its own inputs.
		st.ShootInSync = res.ShootInSyncRecord
	}
	mirrorShoot(st, res.Input.Shoot)
}

// setKStatus sets kstatus' abnormal-true conditions from the decision and removes the one that does not apply: a
// health check (Flux, Argo CD, kpt) then sees a Pending Runtime as in progress and a Failed one as failed, instead of
// waiting for its timeout; a Ready one has neither.
func setKStatus(st *imv1.RuntimeStatus, d lifecycle.Decision, generation int64, now time.Time) {
	reason := string(d.Reason)
	if reason == "" {
		reason = string(d.State) // a condition needs a reason
	}
	skeleton.SetKStatus(&st.Conditions, generation, d.State == lifecycle.StatePending, d.State == lifecycle.StateFailed, reason, d.Message, now)
}

// setDeprovisioned reports the previous manager's Deprovisioned condition while the Runtime is deleted: unknown
// (in progress) while the GardenerCluster and kubeconfig are removed and once the shoot is marked for deletion,
// false when a step failed.
func setDeprovisioned(rt *imv1.Runtime, res usecase.TeardownResult, err error, now time.Time) {
	c := metav1.Condition{Type: lifecycle.ConditionDeprovisioned, Status: metav1.ConditionUnknown, ObservedGeneration: rt.Generation}
	switch {
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, lifecycle.ReasonGardenerError, err.Error()
	case !res.AccessRemoved:
		c.Reason, c.Message = lifecycle.ReasonGardenerClusterDeleted, "Deleting the GardenerCluster and the kubeconfig Secret."
	default:
		c.Reason, c.Message = lifecycle.ReasonGardenerShootDeleted, res.Message
	}
	if c.Message == "" {
		c.Message = "Runtime shoot deletion started."
	}
	setCondition(&rt.Status, c, now)
}

// metaTime is t as an API time; nil for the zero time.
func metaTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t)
	return &mt
}

// timeOf is the time of an API time; zero for nil.
func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func setCondition(st *imv1.RuntimeStatus, c metav1.Condition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(&st.Conditions, c)
}

// mirrorShoot copies Gardener's last operation and errors into the status, for people and KEB's logs.
func mirrorShoot(st *imv1.RuntimeStatus, s shootstate.Shoot) {
	if !s.Exists || s.LastOperation == nil {
		return
	}
	op := s.LastOperation
	st.ShootLastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationType(op.Type),
		State: gardencorev1beta1.LastOperationState(op.State), Progress: op.Progress, Description: op.Description,
		LastUpdateTime: metav1.NewTime(op.LastUpdate)}
	st.ShootLastErrors = nil
	for _, e := range s.LastErrors {
		le := gardencorev1beta1.LastError{Description: e.Description}
		for _, c := range e.Codes {
			le.Codes = append(le.Codes, gardencorev1beta1.ErrorCode(c))
		}
		st.ShootLastErrors = append(st.ShootLastErrors, le)
	}
}

// report updates the metrics and returns an event when the change of state or reason is worth one
// (lifecycle.StateChangeEvent: not for the steps of a provisioning in its normal course, which the Ready condition
// tells).
func (h *hooks) report(rt, before *imv1.Runtime, d lifecycle.Decision, now time.Time) []skeleton.Event {
	h.metrics.SetRuntime(rt.Namespace+"/"+rt.Name, rt.Spec.Shoot.Provider.Type, string(d.State))
	old := meta.FindStatusCondition(before.Status.Conditions, imv1.ConditionReady)
	if d.State == lifecycle.StateReady && before.Status.State != imv1.RuntimeStateReady {
		if !before.Status.ProvisioningCompleted {
			h.metrics.provisioningDuration.Observe(now.Sub(rt.CreationTimestamp.Time).Seconds())
		} else if old != nil {
			h.metrics.updateDuration.Observe(now.Sub(old.LastTransitionTime.Time).Seconds())
		}
	}
	fromReason := lifecycle.Reason("")
	if old != nil {
		fromReason = lifecycle.Reason(old.Reason)
	}
	if !lifecycle.StateChangeEvent(lifecycle.State(before.Status.State), fromReason, d) {
		return nil
	}
	return []skeleton.Event{{Warning: d.State == lifecycle.StateFailed, Reason: string(d.Reason), Action: "StateChange",
		Message: fmt.Sprintf("%s -> %s: %s", before.Status.State, d.State, d.Message)}}
}
