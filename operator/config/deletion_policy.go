package config

import (
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
)

// DeletionPolicy converts the deletion section of the configuration into the domain policy. An unset budget is
// the default budget (deletion.DefaultBudget).
func (c DeletionConfig) DeletionPolicy() deletion.Policy {
	p := deletion.Policy{DefaultWindow: c.DefaultGracePeriod.Duration, MaxWindow: c.MaxGracePeriod.Duration,
		ForceDeletionAfter: c.ForceDeletionAfter.Duration, Frozen: c.Freeze, PlanWindows: map[string]time.Duration{},
		Budget: deletion.Budget{Per: c.Budget.Period.Duration}, MaxClockAhead: c.MaxClockAhead.Duration,
		BindingReleaseHold: c.BindingReleaseHold.Duration}
	if c.Budget.Limit != nil {
		p.Budget.Limit = *c.Budget.Limit
	}
	for plan, d := range c.PlanGracePeriods {
		p.PlanWindows[plan] = d.Duration
	}
	if p.Budget == (deletion.Budget{}) {
		p.Budget = deletion.DefaultBudget()
	}
	return p
}
