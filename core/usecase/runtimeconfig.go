package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// BootstrapRecheck is how soon a runtime whose bootstrap Deployments are not available yet is looked at again.
const BootstrapRecheck = 15 * time.Second

// RecordedConfiguration is what a Runtime's status records of the configuration inside the runtime.
type RecordedConfiguration struct {
	// Hash identifies the desired state last reached, at AppliedAt (empty, zero: never).
	Hash      string
	AppliedAt time.Time
	// ShootReconciledAt is the shoot's last successful Gardener operation that state was computed with: it stands in
	// while Gardener works on the shoot (its last operation then says nothing of the previous success).
	ShootReconciledAt time.Time
	// Bootstrap is the bootstrap set last attempted inside the runtime and whether that failed: recorded by every
	// pass that attempted one, also when the configuration was not reached (the rollout counts the failures).
	Bootstrap runtimeconfig.BootstrapRecord
}

// desiredConfiguration is the desired state inside the runtime, with its hash and the shoot time it was computed with.
type desiredConfiguration struct {
	desired      runtimeconfig.Desired
	hash         string
	reconciledAt time.Time
	// onlyReconcileTime: computed with the recorded reconcile time, the desired state is the one reached.
	onlyReconcileTime bool
}

// desiredConfiguration computes what the runtime of req must hold, from the Runtime, the spec applied to its shoot,
// the shoot as observed (cur: its current infrastructure) and the landscape (seed region, bootstrap manifests).
func (p *Provisioner) desiredConfiguration(ctx context.Context, req RuntimeRequest, spec shoot.Spec, cur *shoot.Current,
	s shootstate.Shoot, now time.Time) (desiredConfiguration, error) {
	facts := runtimeconfig.Facts{Runtime: req.Runtime, Config: p.Config, InstanceID: req.InstanceID, InstanceName: req.InstanceName,
		OIDCServed: slices.ContainsFunc(spec.Extensions, func(e shoot.Extension) bool { return e.Type == shoot.ExtensionOIDC && !e.Disabled })}
	if cur != nil {
		facts.Shoot.DualStack = cur.DualStack
		facts.Shoot.InfrastructureConfig = cur.InfrastructureConfig
		for _, z := range cur.InfrastructureZones {
			facts.Shoot.Zones = append(facts.Shoot.Zones, runtimeconfig.Zone{Name: z.Name, CIDRs: slices.Clone(z.CIDRs)})
		}
	}
	at, ok := s.ReconciledAt()
	if !ok {
		at = req.Configured.ShootReconciledAt
	}
	facts.Shoot.ReconciledAt = at
	if s.SeedName != "" && p.Seeds != nil {
		region, err := p.Seeds.SeedRegion(ctx, s.SeedName)
		if err != nil {
			return desiredConfiguration{}, fmt.Errorf("region of seed %s: %w", s.SeedName, err)
		}
		facts.Shoot.SeedRegion = region
	}
	var hold *runtimeconfig.Outcome
	if p.Bootstrap != nil {
		b, err := p.Bootstrap.Load(ctx)
		if err != nil {
			return desiredConfiguration{}, fmt.Errorf("bootstrap manifests: %w", err)
		}
		facts.Bootstrap = b
		if hold, err = p.bootstrapHold(ctx, req, b.ContentHash(), now); err != nil {
			return desiredConfiguration{}, err
		}
	}
	d, err := p.documents.Compute(facts)
	if err != nil {
		return desiredConfiguration{}, err
	}
	if hold != nil {
		d = d.HoldBootstrap(req.Configured.Bootstrap.Hash, *hold)
	}
	out := desiredConfiguration{desired: d, hash: d.Hash(), reconciledAt: at}
	if rec := req.Configured; rec.Hash != "" && rec.Hash != out.hash && !at.Equal(rec.ShootReconciledAt) {
		// Every Gardener success moves the reconcile time: the state at the recorded time differs from d only in
		// the document's last line (AtReconcileTime), so the rest is not computed again.
		if before, err := d.AtReconcileTime(rec.ShootReconciledAt); err == nil && before.Hash() == rec.Hash {
			out.onlyReconcileTime = true
		}
	}
	return out, nil
}

// bootstrapHold asks the rollout whether the runtime of req may be given the set of that content hash; nil when it
// may (or no rollout is configured), otherwise what its Bootstrapped condition reports while it keeps what it has.
func (p *Provisioner) bootstrapHold(ctx context.Context, req RuntimeRequest, hash string, now time.Time) (*runtimeconfig.Outcome, error) {
	if p.Rollout == nil {
		return nil, nil
	}
	plan, err := p.Rollout.Plan(ctx, hash, now)
	if err != nil {
		return nil, err
	}
	m := runtimeconfig.RolloutMember{RuntimeID: req.Runtime.ID, Record: req.Configured.Bootstrap, New: !req.EverReady}
	if plan.Admits(m) {
		return nil, nil
	}
	hold := plan.Hold(m)
	return &hold, nil
}

// configure writes the desired state into the runtime and records it when every part reached it.
func (p *Provisioner) configure(ctx context.Context, in lifecycle.Input, c desiredConfiguration, now time.Time,
	res *ProvisionResult) (lifecycle.Input, bool, error) {
	r, err := p.Configurator.Configure(ctx, c.desired)
	if hold := c.desired.BootstrapHold; hold != nil {
		r.Bootstrap = *hold // the configurator was given no set: it left the runtime's bootstrap objects alone
	}
	res.Configuration = &r
	// What the pass did with the set is recorded whether or not the configuration is reached: the rollout counts
	// the failures and waits for nothing but runtimes that have not tried.
	res.Configured.Bootstrap = runtimeconfig.RecordBootstrap(res.Configured.Bootstrap, appliedSet(c.desired), r.Bootstrap)
	switch r.Bootstrap.Reason {
	case runtimeconfig.ReasonBootstrapPullSecretRefused, runtimeconfig.ReasonBootstrapObjectRefused:
		// A refused set holds nothing up, so only the condition, this event and its counter tell anyone.
		res.Events = append(res.Events, Event{Warning: true, Reason: string(r.Bootstrap.Reason), Message: r.Bootstrap.Message})
	}
	if err != nil {
		return in, false, &configurationError{reason: lifecycle.ReasonRuntimeAPIServerUnreachable, err: err}
	}
	if prob := r.Problem(); prob != nil {
		// The Ready condition keeps its few stable reasons; the part's own reason is on its condition.
		ce := &configurationError{reason: lifecycle.ReasonRuntimeConfigFailed, permanent: prob.Permanent, err: errors.New(prob.Message)}
		switch prob.Reason {
		case runtimeconfig.ReasonBootstrapInProgress:
			ce.reason, ce.retryAfter = lifecycle.ReasonBootstrapInProgress, BootstrapRecheck
		case runtimeconfig.ReasonRuntimeAPIServerUnreachable:
			ce.reason = lifecycle.ReasonRuntimeAPIServerUnreachable
		}
		return in, false, ce
	}
	res.Configured = RecordedConfiguration{Hash: c.hash, AppliedAt: now, ShootReconciledAt: c.reconciledAt, Bootstrap: res.Configured.Bootstrap}
	return in.WithRuntimeConfigured(now), false, nil
}

// appliedSet is the content hash of the set d gives the runtime; "" when it gives none (none configured, or held).
func appliedSet(d runtimeconfig.Desired) string {
	if d.Bootstrap == nil {
		return ""
	}
	return d.BootstrapHash
}

// configurationError is a configuration that did not reach the desired state, with the stable reason to report.
type configurationError struct {
	reason     lifecycle.Reason
	permanent  bool
	retryAfter time.Duration
	err        error
}

func (e *configurationError) Error() string { return e.err.Error() }
func (e *configurationError) Unwrap() error { return e.err }
