package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// Provisioner creates and updates the cluster of a Runtime and the access to it: it observes through the ports,
// asks lifecycle.Decide for the next step and performs it, several steps per call when each one's outcome is
// known at once.
type Provisioner struct {
	Shoots       ports.Shoots
	Seeds        ports.Seeds
	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	// Guard tells a Runtime waiting for an old cluster whether deletions are stopped (read from the cache).
	Guard  ports.DeletionGuard
	Config shoot.Config
	Policy deletion.Policy
	// Addresses are the control plane's egress CIDRs API server ACLs include; nil: ACLs are refused.
	Addresses ports.ControlPlaneAddresses
	// Credentials switches adopted shoots from SecretBindings to CredentialsBindings; nil: not done.
	Credentials ports.CredentialsMigrator
	// AuditLogs claims dedicated audit log tenants (auditLogAccessEnabled); nil: the pool is not used and every
	// cluster gets the shared tenant of its region.
	AuditLogs *AuditLogClaimer
	// Bootstrap reads the landscape's bootstrap manifests; nil: none are configured.
	Bootstrap ports.BootstrapSource
	// Rollout gives a changed bootstrap set to the runtimes in waves; nil: to every runtime at once.
	Rollout *BootstrapRollout
	// RegistryCredentials confirms the copies of registry credentials a Runtime's caches reference; nil: none is
	// confirmed, so a cache with credentials is refused (ReasonForeignRegistryCredentials).
	RegistryCredentials ports.RegistryCredentialOwners
	// DriftPeriod is how long a reached configuration inside a runtime is trusted (0: lifecycle.DefaultDriftPeriod).
	DriftPeriod time.Duration
	// AdoptOnly holds every change to a shoot adopted from the previous system until a person approves it (the
	// Runtime's force-patch annotation): adopted shoots are taken over only when the operator's rendering equals them.
	AdoptOnly bool
	// Bindings and Records, when both set, take back the dirty label the teardown put on the credentials binding
	// of a cluster that is restored (docs/adr/0005): the binding of a live cluster must not read as released.
	Bindings ports.CredentialsBindings
	Records  ports.DeletionRecords
	// Profiles gives the zones a cloud profile offers in a region, for worker pools that come without zones (KEB
	// sends such pools when its providers configuration lists no zones for the region); nil: such pools are refused.
	Profiles ports.CloudProfiles
	// Clock is the garden's clock: a restore keeps the label while another deletion's hold runs, in the garden's
	// time (the earlier of it and the operator's). nil: the operator's clock.
	Clock ports.ServerClock
	// documents remembers the runtimes' provisioning-info documents, rendered on every pass otherwise.
	documents runtimeconfig.Documents
}

// RuntimeRequest is a Runtime as the provisioning use case needs it.
type RuntimeRequest struct {
	// Runtime is the desired runtime; Runtime.ID is the Runtime's name (the runtime ID).
	Runtime   shoot.Runtime
	Namespace string
	UID       string
	// Labels are the Runtime's labels, copied to the GardenerCluster (docs/keb-contract.md).
	Labels map[string]string
	// Plan is the broker plan name label.
	Plan string
	// SuspendPatch and ForcePatch are the patch annotations of the Runtime.
	SuspendPatch, ForcePatch bool
	// AuditLogAccess is spec.auditLogAccessEnabled: the runtime asks for an audit log tenant of its own.
	AuditLogAccess bool
	// AuditLogCR is status.auditLogCR: the tenant the runtime was seen to hold ("" when none).
	AuditLogCR string
	// InstanceID and InstanceName are KEB's instance-id and kyma-name labels (for the provisioning info).
	InstanceID, InstanceName string
	// Configured is what the Runtime's status records of the configuration inside the runtime.
	Configured RecordedConfiguration
	// StateReady is true when status.state says Ready, whoever wrote it (the previous manager writes no Ready
	// condition): an adopted Runtime that runs what KEB asked for stays Ready through the adoption.
	StateReady bool
	// EverReady is status.provisioningCompleted: the runtime was Ready once. One that never was is always given
	// the current bootstrap set (it has no earlier one to keep).
	EverReady bool
	// ShootInSyncRecord is the record of the last answer "the shoot is in sync" the status keeps
	// (ports.SyncCheck.Record): a fresh process answers from it instead of comparing the shoot again.
	ShootInSyncRecord string
}

// ProvisionResult is what a provisioning pass ends with: the last observation and decision (for the status), what
// happened, and whether the force-patch annotation is consumed.
type ProvisionResult struct {
	Input           lifecycle.Input
	Decision        lifecycle.Decision
	Events          []Event
	ClearForcePatch bool
	// AuditLogCR names the dedicated audit log tenant the runtime holds ("" when none).
	AuditLogCR string
	// Configuration is the outcome of configuring the runtime in this pass; nil when it was not attempted.
	Configuration *runtimeconfig.Result
	// Configured is what to record of the configuration inside the runtime (the request's record, or what this pass
	// reached).
	Configured RecordedConfiguration
	// ShootInSyncRecord is the record of this pass's answer "the shoot is in sync" to keep for the next passes; ""
	// when the pass has none (the request's record may stay: it answers only for the inputs it was made of).
	ShootInSyncRecord string
}

// maxActionsPerPass bounds the decide-act loop; every action moves the observation forward, so a handful
// suffices to go from a reconciled shoot to Ready in one pass.
const maxActionsPerPass = 6

// Provision runs one pass for req at now. An error means nothing was decided: the observation failed, or an action
// met a concurrent write (ports.ErrConflict) and what was decided is stale. Any other failed action is part of the
// result (lifecycle.ActionFailed), with Decision.Transient asking for a rate-limited retry.
func (p *Provisioner) Provision(ctx context.Context, req RuntimeRequest, now time.Time) (ProvisionResult, error) {
	claim, err := p.claimAuditLog(ctx, req, now)
	if err != nil {
		return ProvisionResult{}, err
	}
	req.Runtime.DedicatedAuditLog = claim.Dedicated()
	if req.Runtime.RegistryCredentialCopies, err = p.ownRegistryCredentials(ctx, req.Runtime); err != nil {
		return ProvisionResult{}, err
	}
	in, obs, err := p.observe(ctx, req, now)
	if err != nil {
		return ProvisionResult{}, err
	}
	in.Intent.Wait = claim.Wait
	res := ProvisionResult{Configured: req.Configured, Events: claim.Events, ShootInSyncRecord: obs.syncRecord}
	if claim.Tenant != nil {
		res.AuditLogCR = claim.Tenant.Name
	}
	d := lifecycle.Decide(in, now)
	for i := 0; i < maxActionsPerPass && d.Action != lifecycle.ActionNone; i++ {
		next, stop, err := p.act(ctx, req, in, obs, d, now, &res)
		if errors.Is(err, ports.ErrConflict) {
			// Someone wrote meanwhile (Gardener reconciling the shoot, another writer): the decision was made on a
			// stale view. Nothing is reported from it: a Ready runtime would show KEB a failure it never had (the
			// take-over of a running cluster left Ready at the switch this way). The pass is retried, with backoff,
			// on a fresh observation.
			return ProvisionResult{}, fmt.Errorf("%s of runtime %s: %w", d.Action, req.Runtime.ID, err)
		}
		if err != nil {
			var resume bool
			if in, resume = lifecycle.HeldForReview(in, actionError(err)); resume {
				d = lifecycle.Decide(in, now) // held, but the shoot runs what KEB asked for: go on as in sync
				continue
			}
			d = lifecycle.ActionFailed(d, actionError(err))
			break
		}
		in = next
		if stop {
			d.RequeueAfter = time.Second // the observation changed shape (restore, adoption): look again from scratch
			break
		}
		d = lifecycle.Decide(in, now)
	}
	res.Input, res.Decision = in, d
	return res, nil
}

// ownRegistryCredentials confirms, by their labels in the garden, which of the project Secrets the Runtime's
// registry caches reference are copies made for this runtime: the Runtime's spec is written by others too (KEB),
// and a reference to another runtime's copy or to the project's cloud credentials must never reach a shoot.
func (p *Provisioner) ownRegistryCredentials(ctx context.Context, rt shoot.Runtime) ([]string, error) {
	var names []string
	for _, c := range rt.RegistryCaches {
		if c.CredentialsSecret != "" && strings.HasPrefix(c.CredentialsSecret, shoot.RegistryCredentialsPrefix) &&
			!slices.Contains(names, c.CredentialsSecret) {
			names = append(names, c.CredentialsSecret)
		}
	}
	if len(names) == 0 || p.RegistryCredentials == nil {
		return nil, nil
	}
	owned, err := p.RegistryCredentials.OwnedCopies(ctx, rt.ID, names)
	if err != nil {
		return nil, fmt.Errorf("confirm the registry credential copies of runtime %s: %w", rt.ID, err)
	}
	return owned, nil
}

// provisionFacts is what a pass computed besides the domain input: the spec to apply and the desired configuration
// inside the runtime.
type provisionFacts struct {
	spec   shoot.Spec
	config desiredConfiguration
	// syncRecord is the record of the shoot's in-sync answer ("" when none).
	syncRecord string
}

// observe builds the domain input: the intent from the request (with the generated spec), the shoot and access.
func (p *Provisioner) observe(ctx context.Context, req RuntimeRequest, now time.Time) (lifecycle.Input, provisionFacts, error) {
	rt := req.Runtime
	observed, err := p.Shoots.Get(ctx, rt.Name, ports.ReadCached)
	if err != nil {
		return lifecycle.Input{}, provisionFacts{}, fmt.Errorf("observe shoot %s: %w", rt.Name, err)
	}
	it := lifecycle.Intent{RuntimeID: rt.ID, Generation: rt.Generation, ShootName: rt.Name, Region: rt.Region,
		EnforceSeedLocation: rt.EnforceSeedLocation, SuspendPatch: req.SuspendPatch, ForcePatch: req.ForcePatch,
		AuditLogAccess: req.AuditLogAccess, RegistryCaches: len(rt.RegistryCaches),
		BoundAdministrators: runtimeconfig.BoundAdministrators(rt.Administrators), ReservedAdministrators: runtimeconfig.ReservedAdministrators(rt.Administrators)}
	if d := rt.DedicatedAuditLog; d != nil {
		it.DedicatedAuditLog = d.Name
	}
	// fresh is what the Runtime and the configuration ask for; its hash changes only when they do. The spec to
	// apply to an existing shoot also takes what the update rules keep from it (completed or maintained versions,
	// zone order), which Gardener changes without anything to re-apply.
	cfg, err := p.shootConfig(ctx, rt)
	if err != nil {
		return lifecycle.Input{}, provisionFacts{}, err
	}
	owned := observed.OwnedBy(rt.ID) && observed.Marks.PendingDeletion == nil
	var cur *shoot.Current
	curRead := false
	if owned && slices.ContainsFunc(rt.Workers, func(w shoot.Worker) bool { return len(w.Zones) == 0 }) {
		// A pool without zones keeps the zones its pool in the shoot has: read them before generating.
		if cur, err = p.Shoots.Current(ctx, rt.Name); err != nil {
			return lifecycle.Input{}, provisionFacts{}, fmt.Errorf("observe shoot %s: %w", rt.Name, err)
		}
		curRead = true
	}
	rt, genErr := p.fillZones(ctx, rt, cfg, cur)
	if genErr != nil && shoot.AsValidationError(genErr) == nil {
		return lifecycle.Input{}, provisionFacts{}, genErr
	}
	var fresh shoot.Spec
	var sync ports.SyncCheck
	if genErr == nil {
		fresh, genErr = shoot.Generate(rt, cfg)
	}
	spec := fresh
	if genErr == nil && owned {
		if !curRead {
			if cur, err = p.Shoots.Current(ctx, rt.Name); err != nil {
				return lifecycle.Input{}, provisionFacts{}, fmt.Errorf("observe shoot %s: %w", rt.Name, err)
			}
		}
		if cur != nil {
			spec, genErr = shoot.GenerateUpdate(rt, cfg, *cur)
		}
	}
	if genErr != nil {
		it.Invalid = &lifecycle.Problem{Field: "spec", Message: genErr.Error()}
		if ve := shoot.AsValidationError(genErr); ve != nil {
			it.Invalid = &lifecycle.Problem{Field: ve.Field, Message: fmt.Sprintf("%s (%s)", ve.Message, ve.Reason), Reason: string(ve.Reason)}
		}
	} else {
		it.DesiredSpecHash = fresh.Hash()
		it.AuditLogKept = spec.AuditLogKept
		if owned {
			a := p.desired(req, spec, it.DesiredSpecHash, observed.Marks.Plan)
			a.InSyncRecord = req.ShootInSyncRecord
			if sync, err = p.Shoots.InSync(ctx, a); err != nil {
				return lifecycle.Input{}, provisionFacts{}, fmt.Errorf("observe shoot %s: %w", rt.Name, err)
			}
			it.ShootInSync = sync.InSync
		}
	}
	in := lifecycle.Input{Intent: it, Shoot: observed, DeletionPolicy: p.Policy, DriftPeriod: p.DriftPeriod, ReportedReady: req.StateReady,
		Access: lifecycle.Access{Configuration: lifecycle.Configuration{AppliedHash: req.Configured.Hash, AppliedAt: req.Configured.AppliedAt}}}
	if pd := observed.Marks.PendingDeletion; pd != nil && pd.RuntimeID != rt.ID {
		if in.DeletionsFrozen, err = p.deletionsStopped(ctx); err != nil {
			return lifecycle.Input{}, provisionFacts{}, err
		}
	}
	obs := provisionFacts{spec: spec, syncRecord: sync.Record}
	if genErr == nil && observed.Exists {
		if in.Access.GardenerClusterInSync, err = p.Access.InSync(ctx, gardenerCluster(req, spec)); err != nil {
			return lifecycle.Input{}, provisionFacts{}, err
		}
		state, err := p.Access.KubeconfigReady(ctx, req.Namespace, rt.ID, now)
		if err != nil {
			return lifecycle.Input{}, provisionFacts{}, err
		}
		in.Access.SecretExists, in.Access.SecretUnrecorded = state == ports.KubeconfigValid, state == ports.KubeconfigUnrecorded
	}
	if genErr == nil && owned {
		if obs.config, err = p.desiredConfiguration(ctx, req, spec, cur, observed, now); err != nil {
			return lifecycle.Input{}, provisionFacts{}, err
		}
		in.Access.Configuration.DesiredHash = obs.config.hash
		in.Access.Configuration.Bootstrap = obs.config.desired.BootstrapConfigured()
		in.Access.Configuration.BootstrapHold = obs.config.desired.BootstrapHold
		in.Access.Configuration.OnlyReconcileTimeDiffers = obs.config.onlyReconcileTime
	}
	return in, obs, nil
}

// fillZones gives the pools of rt that come without zones the zones of their pool in the current shoot (cur; nil:
// none yet), or the first zones the cluster's cloud profile offers in the region (shoot.FillZones). The profile is
// read only when a pool needs it. Without a CloudProfiles port (or a cloud profile) rt is returned as it is, and
// generation refuses it. A pool left without zones is a *shoot.ValidationError; any other error is the port's.
func (p *Provisioner) fillZones(ctx context.Context, rt shoot.Runtime, cfg shoot.Config, cur *shoot.Current) (shoot.Runtime, error) {
	if !shoot.NeedsProfileZones(rt, cur) {
		return shoot.FillZones(rt, cur, "", nil)
	}
	profile := shoot.CloudProfileName(rt, cfg)
	if p.Profiles == nil || profile == "" {
		return rt, nil // generation refuses the pool, or the missing cloud profile
	}
	zones, err := p.Profiles.RegionZones(ctx, profile, rt.Region)
	if err != nil {
		return rt, fmt.Errorf("read the zones of region %s in cloud profile %s: %w", rt.Region, profile, err)
	}
	return shoot.FillZones(rt, cur, profile, zones)
}

// deletionsStopped reads the brake and the breaker from the cache, for a Runtime waiting for an old cluster.
func (p *Provisioner) deletionsStopped(ctx context.Context) (bool, error) {
	if p.Policy.Frozen {
		return true, nil
	}
	if p.Guard == nil {
		return false, nil
	}
	st, err := p.Guard.Load(ctx, ports.ReadCached)
	if err != nil {
		return false, fmt.Errorf("read the deletion guard: %w", err)
	}
	return st.Frozen || !st.Ledger.TrippedAt.IsZero(), nil
}

// act performs one decided action and folds its result into the input. stop asks to end this pass.
func (p *Provisioner) act(ctx context.Context, req RuntimeRequest, in lifecycle.Input, obs provisionFacts, d lifecycle.Decision,
	now time.Time, res *ProvisionResult) (lifecycle.Input, bool, error) {
	rt, spec := req.Runtime, obs.spec
	switch d.Action {
	case lifecycle.ActionCheckSeed:
		ok, err := p.Seeds.SeedAvailable(ctx, string(rt.Provider), rt.Region)
		return in.WithSeed(ok), false, err
	case lifecycle.ActionApplyShoot:
		if migrated, err := p.migrateCredentialsBinding(ctx, spec, res); err != nil || migrated {
			return in, migrated, err // migrated: the shoot changed, look again before applying
		}
		a := p.desired(req, spec, in.Intent.DesiredSpecHash, in.Shoot.Marks.Plan)
		if in.Shoot.Exists {
			a.Precondition = ports.Precondition{UID: in.Shoot.UID, ResourceVersion: in.Shoot.ResourceVersion}
		}
		s, err := p.Shoots.Apply(ctx, a)
		if err != nil {
			return in, false, err
		}
		// People see why their shoot was changed: creation, a new generation, configuration, drift, or force.
		res.Events = append(res.Events, Event{Reason: EventShootApplied, Message: d.Message})
		res.ClearForcePatch = res.ClearForcePatch || in.Intent.ForcePatch
		return in.WithAppliedShoot(s), false, nil
	case lifecycle.ActionRetryShoot:
		s, err := p.Shoots.RequestRetry(ctx, rt.Name, d.RetryAttempt, now)
		return in.WithShoot(s), false, err
	case lifecycle.ActionRestoreCluster:
		// The window the cluster keeps is the longest of its record, its own plan and the runtime taking it back;
		// it is computed from exactly the observation the write is pinned to.
		plan := p.Policy.LongerPlan(in.Shoot.Marks.Plan, req.Plan)
		if pd := in.Shoot.Marks.PendingDeletion; pd != nil {
			plan = p.Policy.LongerPlan(pd.Plan, plan)
		}
		// The binding and the record are undone only for a shoot confirmed live: one a lagging cache still shows
		// waiting may be in Gardener's deletion already, and its deletion then relies on both until it is gone.
		live, err := p.Shoots.Get(ctx, rt.Name, ports.ReadLive)
		if err != nil {
			return in, false, fmt.Errorf("confirm shoot %s before taking it back: %w", rt.Name, err)
		}
		if !live.Exists || live.UID != in.Shoot.UID || live.Deleting() || live.Marks.PendingDeletion == nil {
			return in.WithShoot(live), false, nil // decide again on what the garden says
		}
		// The binding first: once the deletion is cancelled this step does not come again.
		if err := p.restoreBinding(ctx, req.Namespace, rt.Name, in.Shoot.UID, now, res); err != nil {
			return in, false, err
		}
		// Then the KCP's record of the deletion, before the mark: a record that outlived its deletion would back
		// whatever deletion record someone writes on the shoot later, with this deletion's (long past) due time.
		// Without it the mark is unbacked and kept until this step is retried.
		if p.Records != nil {
			if err := p.Records.Withdraw(ctx, rt.Name, in.Shoot.UID); err != nil {
				return in, false, fmt.Errorf("withdraw the KCP's record of the deletion of shoot %s being taken back: %w", rt.Name, err)
			}
		}
		s, err := p.Shoots.CancelDeletion(ctx, rt.Name, rt.ID, plan,
			ports.Precondition{UID: in.Shoot.UID, ResourceVersion: in.Shoot.ResourceVersion})
		if err != nil {
			return in, false, err
		}
		res.Events = append(res.Events, Event{Reason: EventClusterRestored,
			Message: fmt.Sprintf("Shoot %s taken back from pending deletion and woken up", rt.Name)})
		return in.WithShoot(s), true, nil
	case lifecycle.ActionAdoptShoot:
		s, err := p.Shoots.Adopt(ctx, rt.Name, rt.ID, req.Plan)
		if err != nil {
			return in, false, err
		}
		res.Events = append(res.Events, Event{Reason: EventShootAdopted, Message: fmt.Sprintf(
			"Shoot %s, created for this runtime by the previous infrastructure manager, is now managed by this operator", rt.Name)})
		return in.WithShoot(s), true, nil
	case lifecycle.ActionEnsureGardenerCluster:
		return in.WithGardenerCluster(), false, p.Access.Ensure(ctx, gardenerCluster(req, spec))
	case lifecycle.ActionConfigureRuntime:
		return p.configure(ctx, in, obs.config, now, res)
	}
	return in, true, fmt.Errorf("unknown action %q", d.Action)
}

// claimAuditLog returns the runtime's dedicated audit log tenant, claiming one when the Runtime asks for it.
func (p *Provisioner) claimAuditLog(ctx context.Context, req RuntimeRequest, now time.Time) (AuditLogClaim, error) {
	if p.AuditLogs == nil {
		return AuditLogClaim{}, nil
	}
	rt := req.Runtime
	// A runtime that does not ask still reads the pool (from the cache): the previous infrastructure manager may
	// have claimed a tenant for it, which it keeps (status.auditLogCR is not set by that manager).
	areq := auditlog.Request{RuntimeID: rt.ID, Region: rt.Region, Enabled: req.AuditLogAccess}
	if req.AuditLogAccess {
		s, err := p.Shoots.Get(ctx, rt.Name, ports.ReadCached)
		if err != nil {
			return AuditLogClaim{}, fmt.Errorf("observe shoot %s for the audit log claim: %w", rt.Name, err)
		}
		areq.Existing = s.Exists
	}
	claim, err := p.AuditLogs.Claim(ctx, areq, now)
	if err != nil {
		return AuditLogClaim{}, fmt.Errorf("audit log tenant of runtime %s: %w", rt.ID, err)
	}
	return claim, nil
}

// desired is the desired state of the Runtime's shoot; InSync and Apply must see the same one.
func (p *Provisioner) desired(req RuntimeRequest, spec shoot.Spec, hash, recordedPlan string) ports.ShootApply {
	return ports.ShootApply{Spec: spec, RuntimeID: req.Runtime.ID, RuntimeGeneration: req.Runtime.Generation, SpecHash: hash,
		Plan: p.Policy.LongerPlan(recordedPlan, req.Plan), HoldAdoptedChanges: p.AdoptOnly && !req.ForcePatch}
}

// Labels of the GardenerCluster the previous infrastructure manager set from the Runtime's spec when it created one.
const (
	labelShootName      = "kyma-project.io/shoot-name"
	labelRegion         = "kyma-project.io/region"
	labelPlatformRegion = "kyma-project.io/platform-region"
)

// gardenerCluster is the GardenerCluster of the runtime: the Runtime's labels, and at creation the labels the
// previous infrastructure manager gave every GardenerCluster it created (managed-by, internal, and the shoot's name
// and regions where the Runtime has no such label). The managed-by and internal labels are not copied from the
// Runtime: they say who created the GardenerCluster, which KEB's own (managed-by lifecycle-manager) keep saying.
func gardenerCluster(req RuntimeRequest, spec shoot.Spec) ports.GardenerClusterSpec {
	gc := ports.GardenerClusterSpec{Namespace: req.Namespace, RuntimeID: req.Runtime.ID, OwnerUID: req.UID,
		ShootName: req.Runtime.Name, SecretName: kubeconfig.SecretName(req.Runtime.ID), SecretKey: kubeconfig.SecretKey,
		Labels: maps.Clone(req.Labels)}
	if gc.Labels == nil {
		gc.Labels = map[string]string{}
	}
	delete(gc.Labels, wire.LabelManagedBy)
	delete(gc.Labels, wire.LabelInternal)
	gc.InitialLabels = map[string]string{wire.LabelManagedBy: wire.ManagedByValue, wire.LabelInternal: "true",
		labelShootName: req.Runtime.Name, labelRegion: req.Runtime.Region}
	if r := req.Runtime.PlatformRegion; r != "" {
		gc.InitialLabels[labelPlatformRegion] = r
	}
	if spec.DNS != nil {
		gc.SKRDomain = spec.DNS.Domain
	}
	return gc
}

// isAuditLogResource reports whether resource is the spec.resources entry of the audit log credentials.
func isAuditLogResource(resource string) bool {
	return resource == shoot.AuditLogResourceName || resource == shoot.PreviousDedicatedAuditLogResourceName
}

// actionError tells the state machine whether repeating a failed action can help.
func actionError(err error) lifecycle.ActionError {
	var ce *configurationError
	if errors.Is(err, ports.ErrAdoptionReviewRequired) {
		return lifecycle.ActionError{Message: err.Error(), Reason: lifecycle.ReasonAdoptionReviewRequired}
	}
	if errors.As(err, &ce) {
		return lifecycle.ActionError{Message: err.Error(), Reason: ce.reason, Permanent: ce.permanent, RetryAfter: ce.retryAfter}
	}
	if mr := (*ports.MissingReferenceError)(nil); errors.As(err, &mr) && isAuditLogResource(mr.Resource) {
		// The landscape's Secret is missing, not the Runtime wrong: it waits for the Secret, and reports so.
		return lifecycle.ActionError{Message: err.Error(), Reason: lifecycle.ReasonAuditLogSecretMissing}
	}
	return lifecycle.ActionError{Message: err.Error(),
		Permanent: errors.Is(err, ports.ErrShootRejected) || errors.Is(err, ports.ErrShootNotManaged)}
}
