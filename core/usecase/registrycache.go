package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheSync brings the customer's RegistryCacheConfig objects of one runtime into its Runtime's
// spec.imageRegistryCache (from where the Runtime controller puts them into the shoot), keeps the garden copies of
// their credentials, reports a status on every object and collects copies nothing uses any more.
type RegistryCacheSync struct {
	Runtimes ports.RegistryCacheRuntimes
	Source   ports.RegistryCacheSource
	Garden   ports.RegistryCacheGarden
	// Ledger records the garden copies of each runtime in the KCP: the only way the sync finds them again (it
	// never lists the project's Secrets).
	Ledger ports.RegistryCacheLedger
	// Resolver checks that upstream hosts resolve; nil skips the check.
	Resolver ports.UpstreamResolver
	// Interval is the periodic sync (the RequeueAfter of a synced runtime).
	Interval time.Duration
}

// Outcomes of a sync (metric label values).
const (
	SyncSynced      = "synced"
	SyncDisabled    = "module_disabled"
	SyncWaiting     = "not_provisioned"
	SyncCollected   = "runtime_gone"
	SyncConflict    = "conflict"
	SyncUnreachable = "unreachable"
	SyncError       = "error"
	// SyncOverLimit: the runtime's objects exceed the source's limits (registrycache.OverLimit); nothing applied.
	SyncOverLimit = "over_limit"
)

// EventRegistryCacheUpdated: spec.imageRegistryCache of a Runtime was written from its RegistryCacheConfig objects.
const EventRegistryCacheUpdated = "RegistryCacheUpdated"

// EventRegistryCredentialsSquatted: the garden already held a Secret under the name of a copy of registry
// credentials that is not that copy; the cache that needs it is refused (registrycache.ReasonSecretCopyConflict).
const EventRegistryCredentialsSquatted = "RegistryCredentialsSquatted"

// EventRegistryCacheOverLimit: the runtime's RegistryCacheConfig objects exceed the limits of what the operator
// reads of one runtime; none was evaluated and spec.imageRegistryCache was left as it was.
const EventRegistryCacheOverLimit = "RegistryCacheConfigsOverLimit"

// RegistryCacheResult says what a sync did.
type RegistryCacheResult struct {
	Outcome string
	// Caches is the number of caches written; Refused the number of objects not applied.
	Caches, Refused int
	// SecretsCreated and SecretsDeleted count garden copies.
	SecretsCreated, SecretsDeleted int
	Events                         []Event
	RequeueAfter                   time.Duration
}

// Sync runs one pass for the Runtime ref at now.
func (s *RegistryCacheSync) Sync(ctx context.Context, ref ports.RuntimeRef, now time.Time) (RegistryCacheResult, error) {
	rt, err := s.Runtimes.Get(ctx, ref)
	if err != nil {
		return RegistryCacheResult{Outcome: SyncError}, fmt.Errorf("observe runtime %s: %w", ref, err)
	}
	switch {
	case !rt.Exists || rt.Deleting:
		res := RegistryCacheResult{Outcome: SyncCollected}
		return res, s.collectAll(ctx, ref, &res)
	case !rt.Provisioned:
		// The module choice is in the runtime, which cannot be asked before it is provisioned.
		return RegistryCacheResult{Outcome: SyncWaiting, RequeueAfter: s.Interval}, nil
	}
	res := RegistryCacheResult{Outcome: SyncSynced, RequeueAfter: s.Interval}
	enabled, err := s.Source.ModuleEnabled(ctx, ref.RuntimeID)
	if over := (*registrycache.OverLimit)(nil); errors.As(err, &over) {
		return s.overLimit(ctx, ref, nil, over, now, res)
	}
	if err != nil {
		// Unknown is not "disabled": the caches stay until the runtime answers.
		res.Outcome = outcomeOf(err)
		return res, fmt.Errorf("read the module choice of runtime %s: %w", ref.RuntimeID, err)
	}
	if !enabled {
		// Only the operator's own entries go; entries someone else wrote (KEB) are not the module's business.
		res.Outcome = SyncDisabled
		if rt.Managed {
			if err := s.write(ctx, ref, rt, &registrycache.Plan{}, &res); err != nil && !errors.Is(err, ports.ErrFieldOwnedByOthers) {
				return res, err
			}
		}
		return res, s.collect(ctx, ref, rt.ShootName, nil, &res, ports.ReadCached)
	}
	cfgs, err := s.Source.Configs(ctx, ref.RuntimeID)
	if over := (*registrycache.OverLimit)(nil); errors.As(err, &over) {
		return s.overLimit(ctx, ref, cfgs, over, now, res)
	}
	if err != nil {
		res.Outcome = outcomeOf(err)
		return res, fmt.Errorf("read RegistryCacheConfigs of runtime %s: %w", ref.RuntimeID, err)
	}
	plan, err := s.plan(ctx, ref.RuntimeID, rt.ShootName, cfgs)
	if err != nil {
		res.Outcome = outcomeOf(err)
		return res, err
	}
	conflict := false
	switch err := s.write(ctx, ref, rt, &plan, &res); {
	case errors.Is(err, ports.ErrFieldOwnedByOthers):
		conflict, res.Outcome = true, SyncConflict
	case err != nil:
		res.Outcome = outcomeOf(err)
		return res, err
	}
	res.Caches, res.Refused = len(plan.Entries), len(cfgs)-len(plan.Entries)
	view, err := s.Garden.Shoot(ctx, rt.ShootName, ports.ReadCached)
	if err != nil {
		return res, fmt.Errorf("observe shoot %s: %w", rt.ShootName, err)
	}
	for _, c := range cfgs {
		st := registrycache.StatusOf(c, plan, registrycache.AppliedIn(view), conflict)
		if st == c.Status {
			continue
		}
		if err := s.Source.SetStatus(ctx, ref.RuntimeID, c, st, now); err != nil && !errors.Is(err, ports.ErrConflict) {
			res.Outcome = outcomeOf(err)
			return res, fmt.Errorf("report the status of RegistryCacheConfig %s in runtime %s: %w", c.Key(), ref.RuntimeID, err)
		}
	}
	return res, s.collect(ctx, ref, rt.ShootName, plan.SecretNames(), &res, ports.ReadCached)
}

// overLimit handles a runtime whose objects exceed the source's limits. Nothing is evaluated and nothing is written
// in the KCP or the garden: a part of the objects is not the runtime's configuration, so applying it would remove
// the caches of the others. The Runtime keeps spec.imageRegistryCache (the shoot its caches), no copy is collected
// (which are wanted is unknown), the objects that were read report the limit and the Runtime gets a warning event.
// It is the customer's to fix, not a failed sync: no error, so no retries; the next look is the periodic one.
func (s *RegistryCacheSync) overLimit(ctx context.Context, ref ports.RuntimeRef, read []registrycache.Config,
	over *registrycache.OverLimit, now time.Time, res RegistryCacheResult) (RegistryCacheResult, error) {
	res.Outcome = SyncOverLimit
	res.Events = append(res.Events, Event{Reason: EventRegistryCacheOverLimit, Warning: true, Message: fmt.Sprintf(
		"registry caches not evaluated (%s): %s; spec.imageRegistryCache and the shoot's caches are left as they are",
		over.Reason, over.Detail)})
	for _, c := range read {
		st := over.Status(c)
		if st == c.Status {
			continue
		}
		if err := s.Source.SetStatus(ctx, ref.RuntimeID, c, st, now); err != nil && !errors.Is(err, ports.ErrConflict) {
			res.Outcome = outcomeOf(err)
			return res, fmt.Errorf("report the limit on RegistryCacheConfig %s in runtime %s: %w", c.Key(), ref.RuntimeID, err)
		}
	}
	return res, nil
}

// plan observes what the configs need (credentials, name resolution) and decides.
func (s *RegistryCacheSync) plan(ctx context.Context, runtimeID, shootName string, cfgs []registrycache.Config) (registrycache.Plan, error) {
	keys, hosts := registrycache.Needs(cfgs)
	in := registrycache.Input{RuntimeID: runtimeID, ShootName: shootName, Configs: cfgs,
		Credentials: map[registrycache.Key]registrycache.Credentials{}, Unresolvable: map[string]string{}}
	for _, k := range keys {
		cred, err := s.Source.Credentials(ctx, runtimeID, k)
		if err != nil {
			return registrycache.Plan{}, fmt.Errorf("read credentials Secret %s in runtime %s: %w", k, runtimeID, err)
		}
		in.Credentials[k] = cred
	}
	if s.Resolver != nil {
		for _, h := range hosts {
			// A failing resolver is no reason to refuse a customer's cache: the check is skipped then.
			if why, err := s.Resolver.Resolve(ctx, h); err == nil && why != "" {
				in.Unresolvable[h] = why
			}
		}
	}
	return registrycache.Decide(in), nil
}

// write records the plan's copies in the ledger and makes sure each exists (the spec must never name a copy that
// does not exist, or a Secret that is not the copy), then applies the plan's entries when they differ from the
// Runtime's. A name held by a Secret that is not the operator's copy refuses the caches that need it, and only them.
func (s *RegistryCacheSync) write(ctx context.Context, ref ports.RuntimeRef, rt ports.RegistryCacheRuntime,
	plan *registrycache.Plan, res *RegistryCacheResult) error {
	// Live: a name forgotten meanwhile but still in the cache would pass for recorded, and its copy be created
	// without a record (a copy nobody knows of).
	recorded, err := s.Ledger.Copies(ctx, ref, ports.ReadLive)
	if err != nil {
		return fmt.Errorf("read the registry credential copies of runtime %s: %w", ref.RuntimeID, err)
	}
	// Recorded before they are created: a crash in between leaves a name to collect, never a copy nobody knows of.
	if missing := registrycache.Missing(*plan, names(recorded)); len(missing) > 0 {
		if err := s.Ledger.Record(ctx, ref, missing); err != nil {
			return fmt.Errorf("record registry credential copies of runtime %s: %w", ref.RuntimeID, err)
		}
	}
	var squatted []string
	for _, c := range plan.Secrets {
		created, err := s.Garden.EnsureSecret(ctx, c)
		switch {
		case errors.Is(err, ports.ErrCopyConflict):
			squatted = append(squatted, c.Name)
			continue
		case err != nil:
			return fmt.Errorf("copy registry credentials %s of runtime %s: %w", c.Name, ref.RuntimeID, err)
		}
		if created {
			res.SecretsCreated++
		}
	}
	if len(squatted) > 0 {
		// Not ours: never referenced, and forgotten so that it is never deleted either.
		if err := s.Ledger.Forget(ctx, ref, squatted); err != nil {
			return fmt.Errorf("forget registry credential copies of runtime %s: %w", ref.RuntimeID, err)
		}
		*plan = plan.Refuse(squatted, registrycache.ReasonSecretCopyConflict,
			"the landscape's copy of the credentials cannot be made (a Secret of that name is in the way); contact the operators of the landscape")
		res.Events = append(res.Events, Event{Reason: EventRegistryCredentialsSquatted, Warning: true, Message: fmt.Sprintf(
			"%d garden Secret(s) named like this runtime's registry credential copies are not the operator's copies (%v); their caches are refused",
			len(squatted), squatted)})
	}
	if registrycache.EntriesEqual(rt.Entries, plan.Entries) {
		return nil
	}
	if err := s.Runtimes.ApplyEntries(ctx, ref, plan.Entries); err != nil {
		return fmt.Errorf("write spec.imageRegistryCache of runtime %s: %w", ref.RuntimeID, err)
	}
	res.Events = append(res.Events, Event{Reason: EventRegistryCacheUpdated, Message: fmt.Sprintf(
		"spec.imageRegistryCache set to %d cache(s) from the RegistryCacheConfig objects in the runtime", len(plan.Entries))})
	return nil
}

// collect deletes the runtime's recorded garden copies that are neither wanted nor referenced by a shoot it was
// made for (asked live before anything is deleted), by name, and forgets them. mode is how the record is read
// first: a cached record without candidates ends the pass (nearly every sync: a runtime's copies rarely become
// garbage, and a read of the record from the API server was a KCP request per sync, issue 29); candidates are
// confirmed on the record as the API server has it before anything is deleted. A name the cache does not show
// yet is collected by a later sync.
func (s *RegistryCacheSync) collect(ctx context.Context, ref ports.RuntimeRef, shootName string, wanted []string, res *RegistryCacheResult,
	mode ports.ReadMode) error {
	existing, err := s.Ledger.Copies(ctx, ref, mode)
	if err != nil {
		return fmt.Errorf("read the registry credential copies of runtime %s: %w", ref.RuntimeID, err)
	}
	candidates := registrycache.Garbage(names(existing), wanted, nil)
	if len(candidates) > 0 && mode != ports.ReadLive {
		if existing, err = s.Ledger.Copies(ctx, ref, ports.ReadLive); err != nil {
			return fmt.Errorf("read the registry credential copies of runtime %s: %w", ref.RuntimeID, err)
		}
		candidates = registrycache.Garbage(names(existing), wanted, nil)
	}
	if len(candidates) == 0 {
		return nil
	}
	var referenced []string
	shoots := []string{shootName}
	for _, e := range existing {
		if e.ShootName != "" && !slices.Contains(shoots, e.ShootName) {
			shoots = append(shoots, e.ShootName)
		}
	}
	for _, name := range shoots {
		if name == "" {
			continue
		}
		view, err := s.Garden.Shoot(ctx, name, ports.ReadLive)
		if err != nil {
			return fmt.Errorf("confirm shoot %s before deleting registry credentials: %w", name, err)
		}
		referenced = append(referenced, view.ReferencedSecrets...)
	}
	garbage := registrycache.Garbage(candidates, wanted, referenced)
	var deleted []string
	for _, name := range garbage {
		if err := s.Garden.DeleteSecret(ctx, name); err != nil {
			s.forget(ctx, ref, deleted)
			return fmt.Errorf("delete registry credentials %s of runtime %s: %w", name, ref.RuntimeID, err)
		}
		deleted = append(deleted, name)
		res.SecretsDeleted++
	}
	if err := s.Ledger.Forget(ctx, ref, deleted); err != nil {
		return fmt.Errorf("forget deleted registry credential copies of runtime %s: %w", ref.RuntimeID, err)
	}
	if len(garbage) < len(candidates) && res.RequeueAfter == 0 {
		res.RequeueAfter = s.Interval // copies a shoot still references: look again later (or at its next change)
	}
	return nil
}

// forget is Forget on an error path: a failure leaves names whose copies are gone, which the next pass deletes
// again (a missing copy is no error) and forgets.
func (s *RegistryCacheSync) forget(ctx context.Context, ref ports.RuntimeRef, deleted []string) {
	if len(deleted) > 0 {
		_ = s.Ledger.Forget(ctx, ref, deleted)
	}
}

// collectAll collects the copies of a runtime that is gone or being deleted: only its shoot can still use them. The
// record is read live: the pass comes once (the Runtime's deletion event, or the sweep that found the record).
func (s *RegistryCacheSync) collectAll(ctx context.Context, ref ports.RuntimeRef, res *RegistryCacheResult) error {
	return s.collect(ctx, ref, "", nil, res, ports.ReadLive)
}

func names(secrets []registrycache.GardenSecret) []string {
	out := make([]string, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, s.Name)
	}
	return out
}

func outcomeOf(err error) string {
	if errors.Is(err, ports.ErrRuntimeUnreachable) {
		return SyncUnreachable
	}
	return SyncError
}
