package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// Events of dedicated audit logs.
const (
	EventAuditLogClaimed            = "AuditLogTenantClaimed"
	EventAuditLogReleased           = "AuditLogTenantReleased"
	EventAuditLogReservationRecover = "AuditLogReservationRecovered"
	EventAuditLogCredentialsCopied  = "AuditLogCredentialsCopied"
	EventAuditLogCredentialsMissing = "AuditLogCredentialsMissing"
	// EventAuditLogCredentialsRefused: the Secret a tenant names as its read credentials may not be copied (see
	// auditlog.CredentialsPolicy); the message starts with the stable auditlog.CredentialsReason.
	EventAuditLogCredentialsRefused = "AuditLogCredentialsRefused"
)

// Read credentials in the runtime: where the customer finds them.
const (
	AuditLogCredentialsNamespace = "kyma-system"
	AuditLogCredentialsName      = "auditlog-read-credentials"
)

// AuditLogPoolRecheck is how often a runtime waiting for a free tenant looks again without an event (a new tenant
// in the pool usually wakes it first).
const AuditLogPoolRecheck = 5 * time.Minute

// auditLogClaimAttempts bounds the reserve/claim loop of one pass; each lost race re-reads the pool live.
const auditLogClaimAttempts = 10

// AuditLogClaimer gets a runtime its dedicated audit log tenant from the pool: reserve, then claim, each write
// preconditioned on the version it was decided on.
type AuditLogClaimer struct {
	Pool ports.AuditLogPool
}

// AuditLogClaim is the outcome of a claim: the runtime's tenant, or why it waits.
type AuditLogClaim struct {
	Tenant *auditlog.Tenant
	Wait   *lifecycle.Wait
	Events []Event
}

// Dedicated is the tenant in shoot generation's terms (nil without one, and for a tenant whose values a shoot
// must not get: auditlog.Tenant.ConfigProblem).
func (c AuditLogClaim) Dedicated() *shoot.DedicatedAuditLog {
	if c.Tenant == nil || c.Tenant.ConfigProblem() != "" {
		return nil
	}
	t := c.Tenant
	return &shoot.DedicatedAuditLog{Name: t.Name, TenantID: t.TenantID, ServiceURL: t.ServiceURL, SecretName: t.SecretName}
}

// Claim returns the tenant req holds, claiming one when req asks for it. Decisions start on the cache (finding an
// existing claim costs no request); every write and every "the pool is empty" is decided again on a live read.
func (c *AuditLogClaimer) Claim(ctx context.Context, req auditlog.Request, now time.Time) (AuditLogClaim, error) {
	mode := ports.ReadCached
	var out AuditLogClaim
	for range auditLogClaimAttempts {
		pool, err := c.Pool.List(ctx, mode)
		if err != nil {
			return out, fmt.Errorf("read the audit log pool: %w", err)
		}
		d := auditlog.DecideClaim(req, pool)
		if d.Action != auditlog.ActionNone && mode == ports.ReadCached {
			// Every write is decided on a live read: a cache that has not seen the runtime's existing claim (the
			// previous manager's, or one made a moment ago) would have it reserve a second tenant.
			mode = ports.ReadLive
			continue
		}
		switch d.Action {
		case auditlog.ActionNone:
			switch {
			case d.Claimed != nil:
				out.Tenant = d.Claimed
				out.Wait = invalidTenant(*d.Claimed)
				return out, nil
			case d.PoolEmpty && mode == ports.ReadCached:
				mode = ports.ReadLive // the cache may not show a tenant added or given back a moment ago
				continue
			case d.PoolEmpty:
				out.Wait = &lifecycle.Wait{Step: lifecycle.StepClaimAuditLog, Reason: lifecycle.ReasonAuditLogPoolEmpty, Recheck: AuditLogPoolRecheck,
					Message: fmt.Sprintf("auditLogAccessEnabled asks for an audit log tenant of the runtime's own, and the pool has no free tenant (state SiemApproved or RegistrationReady, listing region %s in spec.regions); the runtime waits until the audit log manager provides one.",
						req.Region)}
			}
			return out, nil
		case auditlog.ActionReserve:
			_, err = c.Pool.Reserve(ctx, d.Tenant, req.RuntimeID, now)
		case auditlog.ActionClaim:
			var t auditlog.Tenant
			if t, err = c.Pool.Claim(ctx, d.Tenant, req.RuntimeID, now); err == nil {
				out.Events = append(out.Events, Event{Reason: EventAuditLogClaimed,
					Message: fmt.Sprintf("Audit log tenant %s claimed for runtime %s", t.Name, req.RuntimeID)})
			}
		case auditlog.ActionUnreserve:
			if err = c.Pool.Unreserve(ctx, d.Tenant); err == nil {
				why := fmt.Sprintf("it is in state %q or no longer serves region %s", d.Tenant.State, req.Region)
				if d.Claimed != nil {
					why = "the runtime holds " + d.Claimed.Name
				}
				out.Events = append(out.Events, Event{Reason: EventAuditLogReservationRecover,
					Message: fmt.Sprintf("Reservation of audit log tenant %s given back: %s", d.Tenant.Name, why)})
			}
		}
		if err != nil && !errors.Is(err, ports.ErrConflict) {
			return out, fmt.Errorf("%s audit log tenant %s: %w", d.Action, d.Tenant.Name, err)
		}
		mode = ports.ReadLive // after a write or a lost race the cache lags behind
	}
	out.Wait = &lifecycle.Wait{Step: lifecycle.StepClaimAuditLog, Reason: lifecycle.ReasonClaimingAuditLog, Recheck: time.Second,
		Message: "Claiming an audit log tenant: other runtimes claimed the same tenants at the same time; trying again."}
	return out, nil
}

// invalidTenant is the wait of a runtime that holds t when t's values must not reach its shoot (nil otherwise). The
// claim stays (an assignment is immutable, and the audit log manager may correct the values); the shoot keeps what
// it has until then.
func invalidTenant(t auditlog.Tenant) *lifecycle.Wait {
	p := t.ConfigProblem()
	if p == "" {
		return nil
	}
	return &lifecycle.Wait{Step: lifecycle.StepClaimAuditLog, Reason: lifecycle.ReasonAuditLogTenantInvalid, Recheck: AuditLogPoolRecheck,
		Message: fmt.Sprintf("The runtime holds audit log tenant %s, whose values must not reach a shoot: %s. The shoot is left as it is until the audit log manager corrects the AuditLog.", t.Name, p)}
}

// AuditLogKeeper looks after one tenant of the pool: it gives back reservations a crash left behind, copies the read
// credentials into the runtime and releases the tenant once the runtime and its cluster are gone.
type AuditLogKeeper struct {
	Pool     ports.AuditLogPool
	Runtimes ports.AuditLogRuntimes
	// Shoots confirms live, and ShootList finds (from the cache), the cluster of a runtime that is gone.
	Shoots      ports.ShootReader
	ShootList   ports.ShootLister
	Credentials ports.AuditLogCredentials
	Writer      ports.RuntimeSecretWriter
	// CredentialsPolicy says which KCP Secrets may be copied into a runtime as read credentials; the zero policy
	// copies none.
	CredentialsPolicy auditlog.CredentialsPolicy
}

// KeepResult is the decision taken about a tenant and what happened.
type KeepResult struct {
	Decision auditlog.KeepDecision
	// RuntimeID is the runtime the tenant is assigned to or reserved for ("" for a free tenant).
	RuntimeID string
	Events    []Event
}

// Keep decides about the tenant named name at now and acts.
func (k *AuditLogKeeper) Keep(ctx context.Context, name string, now time.Time) (KeepResult, error) {
	pool, err := k.Pool.List(ctx, ports.ReadCached)
	if err != nil {
		return KeepResult{}, fmt.Errorf("read the audit log pool: %w", err)
	}
	t, ok := find(pool, name)
	if !ok {
		return KeepResult{}, nil
	}
	id := t.AssignedTo
	if id == "" {
		id = t.ReservedFor
	}
	res := KeepResult{RuntimeID: id}
	if id == "" || t.Orphaned {
		return res, nil
	}
	owner, err := k.Runtimes.Lookup(ctx, id)
	if err != nil {
		return res, fmt.Errorf("look up runtime %s of audit log tenant %s: %w", id, name, err)
	}
	o := auditlog.Owner{RuntimeExists: owner.Exists, Enabled: owner.Enabled, Provisioned: owner.Provisioned}
	for _, other := range pool {
		if other.Name != t.Name && other.AssignedTo == id && !other.Orphaned {
			o.HoldsOther = other.Name
		}
	}
	d := auditlog.DecideKeep(t, o, now)
	if d.Action == auditlog.KeepConfirmShoot {
		name, exists, err := k.shootOf(ctx, id)
		if err != nil {
			return res, err
		}
		o.ShootExists, o.ShootName = &exists, name
		d = auditlog.DecideKeep(t, o, now)
	}
	res.Decision = d
	switch d.Action {
	case auditlog.KeepUnreserve:
		if err := k.Pool.Unreserve(ctx, t); err != nil {
			return res, fmt.Errorf("give back the reservation of audit log tenant %s: %w", name, err)
		}
		res.Events = append(res.Events, Event{Reason: EventAuditLogReservationRecover, Message: d.Message})
	case auditlog.KeepRelease:
		if err := k.Pool.Release(ctx, t); err != nil {
			return res, fmt.Errorf("release audit log tenant %s: %w", name, err)
		}
		res.Events = append(res.Events, Event{Reason: EventAuditLogReleased, Message: d.Message})
	case auditlog.KeepCopyCredentials:
		return res, k.copyCredentials(ctx, t, &res)
	}
	return res, nil
}

// shootOf finds the cluster of a runtime that is gone: a shoot of the project that belongs to it (as its owner, or
// in its deletion record), confirmed live. The AuditLog does not record the shoot (it is the audit log manager's
// resource), so the shoots are searched by the runtime ID they carry.
func (k *AuditLogKeeper) shootOf(ctx context.Context, runtimeID string) (string, bool, error) {
	shoots, err := k.ShootList.ListManaged(ctx)
	if err != nil {
		return "", false, fmt.Errorf("find the cluster of runtime %s: %w", runtimeID, err)
	}
	for _, s := range shoots {
		if !belongsTo(s, runtimeID) {
			continue
		}
		live, err := k.Shoots.Get(ctx, s.Name, ports.ReadLive)
		if err != nil {
			return "", false, fmt.Errorf("confirm shoot %s of runtime %s: %w", s.Name, runtimeID, err)
		}
		if live.Exists && belongsTo(live, runtimeID) {
			return s.Name, true, nil
		}
	}
	return "", false, nil
}

func belongsTo(s shootstate.Shoot, runtimeID string) bool {
	pd := s.Marks.PendingDeletion
	return s.Marks.RuntimeID == runtimeID || (pd != nil && pd.RuntimeID == runtimeID)
}

// copyCredentials copies the tenant's read credentials into its runtime, if the policy allows that Secret: judged
// by its place before it is read (the operator does not even read another runtime's kubeconfig for it) and by its
// labels after.
func (k *AuditLogKeeper) copyCredentials(ctx context.Context, t auditlog.Tenant, res *KeepResult) error {
	ref := t.ReadCredentials
	if err := k.CredentialsPolicy.CheckReadCredentialsRef(ref.Namespace, ref.Name); err != nil {
		return k.refuseCredentials(t, err, res)
	}
	sec, err := k.Credentials.Read(ctx, ref)
	if errors.Is(err, ports.ErrSecretNotFound) {
		res.Events = append(res.Events, Event{Warning: true, Reason: EventAuditLogCredentialsMissing, Message: fmt.Sprintf(
			"The read credentials Secret %s/%s of audit log tenant %s does not exist", t.ReadCredentials.Namespace, t.ReadCredentials.Name, t.Name)})
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the read credentials of audit log tenant %s: %w", t.Name, err)
	}
	if err := k.CredentialsPolicy.CheckReadCredentials(t.Name, ref.Namespace, ref.Name, sec.Labels); err != nil {
		return k.refuseCredentials(t, err, res)
	}
	written, err := k.Writer.EnsureSecret(ctx, t.AssignedTo, ports.RuntimeSecret{Namespace: AuditLogCredentialsNamespace,
		Name: AuditLogCredentialsName, Data: sec.Data})
	if err != nil {
		return fmt.Errorf("write the audit log read credentials into runtime %s: %w", t.AssignedTo, err)
	}
	if written {
		res.Events = append(res.Events, Event{Reason: EventAuditLogCredentialsCopied, Message: fmt.Sprintf(
			"Read credentials of audit log tenant %s written to %s/%s in runtime %s", t.Name, AuditLogCredentialsNamespace, AuditLogCredentialsName, t.AssignedTo)})
	}
	return nil
}

// refuseCredentials reports a refused read credentials Secret (a warning event, counted by reason): nothing is
// written into the runtime, and what an earlier copy wrote stays (removing it would not take back what was read).
func (k *AuditLogKeeper) refuseCredentials(t auditlog.Tenant, err error, res *KeepResult) error {
	var r *auditlog.CredentialsRefusal
	if !errors.As(err, &r) {
		return fmt.Errorf("check the read credentials of audit log tenant %s: %w", t.Name, err)
	}
	res.Events = append(res.Events, Event{Warning: true, Reason: EventAuditLogCredentialsRefused, Message: fmt.Sprintf(
		"%s: the read credentials of audit log tenant %s are not copied into runtime %s: %s. Label the tenant's read credentials Secret %s=<AuditLog name> in namespace %s, or correct the AuditLog.",
		r.Reason, t.Name, t.AssignedTo, r.Detail, auditlog.LabelReadCredentials, k.CredentialsPolicy.Namespace)})
	return nil
}

func find(pool []auditlog.Tenant, name string) (auditlog.Tenant, bool) {
	for _, t := range pool {
		if t.Name == name {
			return t, true
		}
	}
	return auditlog.Tenant{}, false
}
