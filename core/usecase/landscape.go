package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// EventCredentialsBindingMigrated: an adopted shoot was switched from its SecretBinding to a CredentialsBinding.
const EventCredentialsBindingMigrated = "CredentialsBindingMigrated"

// shootConfig is the generation configuration for rt: the operator's, plus the control plane's egress CIDRs when
// rt's API server ACL needs them (read only then, so a broken address source affects only those Runtimes). A
// source that cannot be read as CIDRs becomes the domain's stable refusal, not a silent lock-out.
func (p *Provisioner) shootConfig(ctx context.Context, rt shoot.Runtime) (shoot.Config, error) {
	cfg := p.Config
	if p.Addresses == nil || !shoot.NeedsControlPlaneCIDRs(rt, cfg) {
		return cfg, nil
	}
	cidrs, err := p.Addresses.EgressCIDRs(ctx)
	switch {
	case errors.Is(err, ports.ErrAddressesInvalid):
		cfg.ACL.ControlPlaneCIDRsProblem = err.Error()
	case err != nil:
		return shoot.Config{}, fmt.Errorf("control plane egress addresses: %w", err)
	}
	cfg.ACL.ControlPlaneCIDRs = cidrs
	return cfg, nil
}

// migrateCredentialsBinding switches an existing shoot that still names a SecretBinding to the CredentialsBinding
// of spec before spec is applied (Gardener rejects a shoot naming both). It happens once: afterwards the shoot has
// no SecretBinding. It reports whether the shoot changed (the observation is then out of date).
func (p *Provisioner) migrateCredentialsBinding(ctx context.Context, spec shoot.Spec, res *ProvisionResult) (bool, error) {
	if p.Credentials == nil {
		return false, nil
	}
	cur, err := p.Shoots.Current(ctx, spec.Name)
	if err != nil || cur == nil {
		return false, err
	}
	binding, needed := shoot.CredentialsBindingMigration(*cur, spec)
	if !needed {
		return false, nil
	}
	migrated, err := p.Credentials.MigrateToCredentialsBinding(ctx, spec.Name, binding)
	if err != nil {
		return false, fmt.Errorf("switch shoot %s to credentials binding %s: %w", spec.Name, binding, err)
	}
	if migrated {
		res.Events = append(res.Events, Event{Reason: EventCredentialsBindingMigrated,
			Message: fmt.Sprintf("Shoot %s now uses CredentialsBinding %s instead of its SecretBinding", spec.Name, binding)})
	}
	return migrated, nil
}
