package kymaruntime

import (
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// holdProgress keeps the Runtime's status as it is when Gardener's progress is the only news and the progress
// written last is younger than every: KEB follows status.state only, and copying each of the gardenlet's progress
// reports made a provisioning cost several times the KCP writes of the previous manager. News is anything else: the
// state, a condition's status, reason or generation, a condition coming or going, Gardener's operation type or state,
// its errors, the configuration record. Progress is the last operation's progress, description and time and the
// condition messages that quote them. held tells the caller to come back after due, so the latest progress is
// written even when Gardener reports nothing more. every <= 0 writes every change.
//
// Before Gardener reports an operation on a new Runtime's shoot, and when it starts one, only the condition
// messages (the shoot generation Gardener is waiting to pick up, the operation's progress) are progress too, counted
// from created (the Runtime's creation, when its status was first written): they change no state and no reason,
// and writing each at once cost every provisioning two status writes (issue 29). A Runtime older than every writes
// them at once.
func holdProgress(before imv1.RuntimeStatus, after *imv1.RuntimeStatus, every time.Duration, created, now time.Time) (due time.Duration, held bool) {
	bo, ao := before.ShootLastOperation, after.ShootLastOperation
	if every <= 0 || equality.Semantic.DeepEqual(*after, before) {
		// Nothing to write is nothing held: a hold would only bring the Runtime back at its due time for a pass
		// that writes nothing (after a restart, every Runtime Gardener reported on within the interval did so,
		// and kept the restarted manager from being idle for up to the interval).
		return 0, false
	}
	var written time.Time
	switch {
	case bo == nil && (ao == nil || ao.State == gardencorev1beta1.LastOperationStateProcessing):
		written = created
	case bo != nil && ao != nil && bo.Type == ao.Type && bo.State == ao.State:
		written = bo.LastUpdateTime.Time
	default:
		return 0, false
	}
	age := now.Sub(written)
	if age >= every || age < 0 {
		return 0, false
	}
	kept := after.DeepCopy()
	kept.ShootLastOperation = bo.DeepCopy()
	for i := range kept.Conditions {
		c := &kept.Conditions[i]
		if old := meta.FindStatusCondition(before.Conditions, c.Type); old != nil && old.Status == c.Status &&
			old.Reason == c.Reason && old.ObservedGeneration == c.ObservedGeneration {
			c.Message, c.LastTransitionTime = old.Message, old.LastTransitionTime
		}
	}
	if !equality.Semantic.DeepEqual(*kept, before) {
		return 0, false
	}
	*after = *kept
	return max(every-age, time.Second), true
}

// sooner is the earlier of two requeue delays, where 0 means none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
