package usecase

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/ports"
)

// TestMissingAuditLogSecretWaits: when the garden refuses the shoot because the audit log credentials Secret of the
// runtime's tenant does not exist, the Runtime reports AuditLogSecretMissing and waits for the Secret (Pending, looked
// at again), never Failed/ShootRejected: the Runtime is not wrong, and KEB gives up on a Failed one (issue 39 item 2).
// Other missing references and other refusals stay rejections.
func TestMissingAuditLogSecretWaits(t *testing.T) {
	apply := lifecycle.Decision{Action: lifecycle.ActionApplyShoot}
	cases := []struct {
		name       string
		err        error
		wantState  lifecycle.State
		wantReason lifecycle.Reason
	}{
		{name: "audit log Secret", err: fmt.Errorf("apply shoot c-1: %w: forbidden", &ports.MissingReferenceError{Resource: "auditlog-credentials"}),
			wantState: lifecycle.StatePending, wantReason: lifecycle.ReasonAuditLogSecretMissing},
		{name: "dedicated tenant's Secret as the previous manager named the entry",
			err:       fmt.Errorf("apply shoot c-1: %w", &ports.MissingReferenceError{Resource: "dedicated-auditlog-credentials"}),
			wantState: lifecycle.StatePending, wantReason: lifecycle.ReasonAuditLogSecretMissing},
		{name: "another entry", err: fmt.Errorf("apply shoot c-1: %w", &ports.MissingReferenceError{Resource: "reg-cache-x"}),
			wantState: lifecycle.StateFailed, wantReason: lifecycle.ReasonShootRejected},
		{name: "another refusal", err: fmt.Errorf("apply shoot c-1: %w: %w", ports.ErrShootRejected, errors.New("invalid")),
			wantState: lifecycle.StateFailed, wantReason: lifecycle.ReasonShootRejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := lifecycle.ActionFailed(apply, actionError(tc.err))
			if d.State != tc.wantState || d.Reason != tc.wantReason {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.State, d.Reason, d.Message, tc.wantState, tc.wantReason)
			}
			if tc.wantReason == lifecycle.ReasonAuditLogSecretMissing && d.RequeueAfter <= 0 {
				t.Fatalf("a runtime waiting for the Secret must be looked at again: %+v", d)
			}
		})
	}
}
