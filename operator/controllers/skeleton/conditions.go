package skeleton

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Outcome is a domain outcome as a condition (Ready, or the condition Ready is derived from) records it.
type Outcome struct {
	// OK makes the condition True, otherwise it is False.
	OK              bool
	Reason, Message string
	// Keep (with OK) says that the outcome only confirms a success (a check that found everything as it was): a
	// recorded success then keeps its reason and message, which tell what last happened (issued, rotated, rules
	// applied), and only its observedGeneration follows.
	Keep bool
}

// SetCondition writes o into the condition typ of conds for generation and reports whether it kept the recorded
// success (Outcome.OK and Keep with the condition True). The last transition time changes only with the status.
func SetCondition(conds *[]metav1.Condition, typ string, generation int64, o Outcome) (kept bool) {
	if c := meta.FindStatusCondition(*conds, typ); o.OK && o.Keep && c != nil && c.Status == metav1.ConditionTrue {
		c.ObservedGeneration = generation
		return true
	}
	status := metav1.ConditionFalse
	if o.OK {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: status, Reason: o.Reason, Message: o.Message,
		ObservedGeneration: generation})
	return false
}

// Types of kstatus' abnormal-true conditions (the strings of imv1.ConditionReconciling and ConditionStalled; the
// skeleton does not import the API package).
const (
	conditionReconciling = "Reconciling"
	conditionStalled     = "Stalled"
)

// SetKStatus sets kstatus' abnormal-true conditions (sigs.k8s.io/cli-utils, what Flux, Argo CD and kpt health checks
// run) with reason and message: Reconciling while the object is on its way, Stalled when it cannot get there without
// a person. Only a condition that applies is kept, as kstatus expects. A condition that turns true gets at as its
// transition time (zero: the wall clock), so a controller with an injected clock stamps its own time; one that stays
// true keeps its time. Every kind's controller sets them through here.
func SetKStatus(conds *[]metav1.Condition, generation int64, reconciling, stalled bool, reason, message string, at time.Time) {
	for _, k := range [...]struct {
		typ     string
		applies bool
	}{{conditionReconciling, reconciling}, {conditionStalled, stalled}} {
		typ := k.typ
		if !k.applies {
			RemoveCondition(conds, typ)
			continue
		}
		c := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation}
		if !at.IsZero() {
			c.LastTransitionTime = metav1.NewTime(at)
		}
		meta.SetStatusCondition(conds, c)
	}
}

// RemoveCondition removes the condition typ from conds in place. Unlike meta.RemoveStatusCondition it copies nothing
// when the condition is absent, which is the common case: a Runtime pass removes up to eight conditions that do not
// apply, on every Gardener report of its shoot (docs/operations/scale.md, "Work per event"). conds must be the caller's
// own (a deep copy of the cached object, as every status a reconciler writes is).
func RemoveCondition(conds *[]metav1.Condition, typ string) {
	i := slices.IndexFunc(*conds, func(c metav1.Condition) bool { return c.Type == typ })
	if i < 0 {
		return
	}
	*conds = slices.Delete(*conds, i, i+1)
}
