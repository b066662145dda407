package runtime

import (
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/operator/config"
)

// DeletionPolicy converts the deletion section of the operator configuration into the domain policy.
func DeletionPolicy(c config.DeletionConfig) deletion.Policy {
	p := deletion.Policy{DefaultWindow: c.DefaultGracePeriod.Duration, MaxWindow: c.MaxGracePeriod.Duration,
		ForceDeletionAfter: c.ForceDeletionAfter.Duration, Frozen: c.Freeze, PlanWindows: map[string]time.Duration{},
		Budget: deletion.Budget{Per: c.Budget.Period.Duration}, MaxClockAhead: c.MaxClockAhead.Duration}
	if c.Budget.Limit != nil {
		p.Budget.Limit = *c.Budget.Limit
	}
	for plan, d := range c.PlanGracePeriods {
		p.PlanWindows[plan] = d.Duration
	}
	return p
}
