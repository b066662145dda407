package kymaruntime

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestDeprovisionedCondition: while a Runtime is deleted it reports the previous infrastructure manager's
// Deprovisioned condition: unknown while the access is removed and once the shoot is marked, false on a failure.
func TestDeprovisionedCondition(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		reason     string
		res        usecase.TeardownResult
		err        error
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"the GardenerCluster is being removed", usecase.TeardownResult{RequeueAfter: usecase.AccessRemovalRecheck},
			nil, metav1.ConditionUnknown, lifecycle.ReasonGardenerClusterDeleted},
		{"the shoot is marked for deletion", usecase.TeardownResult{AccessRemoved: true, Release: true, Message: "shoot c-1 marked"},
			nil, metav1.ConditionUnknown, lifecycle.ReasonGardenerShootDeleted},
		{"a step failed", usecase.TeardownResult{AccessRemoved: true}, errors.New("garden unavailable"),
			metav1.ConditionFalse, lifecycle.ReasonGardenerError},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rt := &imv1.Runtime{}
			setDeprovisioned(rt, tc.res, tc.err, now)
			c := meta.FindStatusCondition(rt.Status.Conditions, lifecycle.ConditionDeprovisioned)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message == "" {
				t.Errorf("condition %+v, want %s/%s with a message", c, tc.wantStatus, tc.wantReason)
			}
		})
	}
}
