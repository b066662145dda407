package skeleton_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

func TestSetConditionKeepsTheLastSuccessReason(t *testing.T) {
	issued := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretRotated", Message: "rotated",
		ObservedGeneration: 1, LastTransitionTime: metav1.Unix(100, 0)}
	failed := issued
	failed.Status, failed.Reason, failed.Message = metav1.ConditionFalse, "TokenRequestFailed", "forbidden"
	valid := skeleton.Outcome{OK: true, Reason: "SecretValid", Message: "still valid", Keep: true}
	cases := []struct {
		name     string
		recorded []metav1.Condition
		o        skeleton.Outcome
		kept     bool
		want     metav1.Condition // LastTransitionTime is checked apart
	}{
		{"a confirmed success keeps the reason and message of the last one", []metav1.Condition{issued}, valid, true,
			metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretRotated", Message: "rotated", ObservedGeneration: 2}},
		{"a confirmation after a failure is written", []metav1.Condition{failed}, valid, false,
			metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretValid", Message: "still valid", ObservedGeneration: 2}},
		{"a first confirmation is written", nil, valid, false,
			metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretValid", Message: "still valid", ObservedGeneration: 2}},
		{"a new success replaces the last one", []metav1.Condition{issued}, skeleton.Outcome{OK: true, Reason: "SecretCreated", Message: "created"}, false,
			metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretCreated", Message: "created", ObservedGeneration: 2}},
		{"a failure replaces a success", []metav1.Condition{issued}, skeleton.Outcome{Reason: "TokenRequestFailed", Message: "forbidden", Keep: true}, false,
			metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "TokenRequestFailed", Message: "forbidden", ObservedGeneration: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := append([]metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "Other"}}, tc.recorded...)

			kept := skeleton.SetCondition(&conds, "Ready", 2, tc.o)

			require.Equal(t, tc.kept, kept)
			require.Len(t, conds, 2)
			require.Equal(t, "Other", conds[0].Reason, "another condition changed")
			got := conds[1]
			if len(tc.recorded) > 0 && tc.recorded[0].Status == got.Status {
				require.Equal(t, tc.recorded[0].LastTransitionTime, got.LastTransitionTime, "the status did not change")
			} else {
				require.NotEqual(t, metav1.Unix(100, 0), got.LastTransitionTime, "the status changed")
			}
			got.LastTransitionTime = metav1.Time{}
			require.Equal(t, tc.want, got)
		})
	}
}

// A Runtime pass removes the conditions that do not apply on every Gardener report of its shoot; almost always they
// are absent, and then the list is left as it is, without a copy.
func TestRemoveConditionCopiesNothingWhenAbsent(t *testing.T) {
	conds := []metav1.Condition{{Type: "Ready"}, {Type: "Stalled"}, {Type: "Provisioned"}}
	if allocs := testing.AllocsPerRun(100, func() { skeleton.RemoveCondition(&conds, "Reconciling") }); allocs != 0 {
		t.Errorf("removing an absent condition allocated %v times", allocs)
	}
	if len(conds) != 3 {
		t.Fatalf("removing an absent condition changed the list: %v", conds)
	}
	skeleton.RemoveCondition(&conds, "Stalled")
	var types []string
	for _, c := range conds {
		types = append(types, c.Type)
	}
	if !slices.Equal(types, []string{"Ready", "Provisioned"}) {
		t.Errorf("after removing Stalled: %v, want Ready, Provisioned in their order", types)
	}
	skeleton.RemoveCondition(&conds, "Ready")
	skeleton.RemoveCondition(&conds, "Provisioned")
	if len(conds) != 0 {
		t.Errorf("after removing all: %v", conds)
	}
}
