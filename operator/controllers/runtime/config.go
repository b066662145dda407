package runtime

import (
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/operator/config"
)

// DefaultForceDeletionAfter is how long a deletion may be stuck before force-deletion is set (not yet a key of the
// configuration file).
const DefaultForceDeletionAfter = 6 * time.Hour

// DeletionPolicy converts the deletion section of the operator configuration into the domain policy.
func DeletionPolicy(c config.DeletionConfig) deletion.Policy {
	p := deletion.Policy{DefaultWindow: c.DefaultGracePeriod.Duration, MaxWindow: c.MaxGracePeriod.Duration,
		ForceDeletionAfter: DefaultForceDeletionAfter, Frozen: c.Freeze, PlanWindows: map[string]time.Duration{}}
	for plan, d := range c.PlanGracePeriods {
		p.PlanWindows[plan] = d.Duration
	}
	return p
}

// FromConfigFile returns the controller configured by the operator configuration file at path.
func FromConfigFile(path string) (*Controller, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("runtime controller: %w", err)
	}
	return &Controller{ShootConfig: cfg.ShootConfig(), DeletionPolicy: DeletionPolicy(cfg.Deletion)}, nil
}
