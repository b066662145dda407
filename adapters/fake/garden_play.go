package fake

// Helpers that play Gardener's and other people's part on the in-memory garden.

import (
	"fmt"
	"slices"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// Drift plays someone else changing the spec of a shoot (a new generation, marks untouched). change may edit
// the worker pools: they are copied first, so the caller's applied spec stays as it was.
func (g *Garden) Drift(name string, change func(*shoot.Spec)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.shoots[name]; ok {
		s.spec.Workers = slices.Clone(s.spec.Workers)
		change(&s.spec)
		s.obs.Generation++
		g.touch(s)
	}
}

// AddSeed makes a seed for provider in region available.
func (g *Garden) AddSeed(provider, region string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seeds[provider+"/"+region] = true
}

// Schedule plays the gardener-scheduler placing the shoot's control plane on seed, in region.
func (g *Garden) Schedule(name, seed, region string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seedRegions[seed] = region
	if s, ok := g.shoots[name]; ok {
		s.obs.SeedName = seed
		g.touch(s)
	}
}

// SetInfrastructureConfig plays Gardener holding raw (JSON) as the shoot's provider infrastructure config, which
// Current reports.
func (g *Garden) SetInfrastructureConfig(name string, raw []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.shoots[name]; ok {
		s.infrastructureConfig = append([]byte(nil), raw...)
		g.touch(s)
	}
}

// AddHiddenSeed adds a seed for provider in region that does not accept new shoots; it does not hide another one.
func (g *Garden) AddHiddenSeed(provider, region string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.seeds[provider+"/"+region]; !ok {
		g.seeds[provider+"/"+region] = false
	}
}

// PutPredecessor plays the system the operator replaces: a shoot created for runtimeID (its runtime-id
// annotation) without the operator's managed-by mark, reconciled, with spec as its spec.
func (g *Garden) PutPredecessor(spec shoot.Spec, runtimeID string) {
	g.PutPredecessorAt(spec, runtimeID, 0)
}

// PutPredecessorAt is PutPredecessor with the Runtime generation the previous manager applied (its
// runtime-generation annotation; 0: none).
func (g *Garden) PutPredecessorAt(spec shoot.Spec, runtimeID string, runtimeGeneration int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.newShoot(spec.Name, &gardenShoot{spec: spec, obs: shootstate.Shoot{Generation: 1, ObservedGeneration: 1,
		APIServerAdvertised: true, Marks: shootstate.Marks{RuntimeID: runtimeID, AppliedRuntimeGeneration: runtimeGeneration},
		LastOperation: &shootstate.Operation{Type: shootstate.OperationReconcile, State: shootstate.StateSucceeded, Progress: 100, LastUpdate: g.clock.Now()}}})
}

// PutForeign stores a shoot the operator did not create.
func (g *Garden) PutForeign(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.newShoot(name, &gardenShoot{obs: shootstate.Shoot{Generation: 1}})
}

// Spec returns the last applied spec of a shoot.
func (g *Garden) Spec(name string) (shoot.Spec, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	if !ok {
		return shoot.Spec{}, false
	}
	return s.spec, true
}

// Confirmed reports whether the deletion confirmation was set on the shoot before it was deleted.
func (g *Garden) Confirmed(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	return ok && s.confirmed
}

// Progress plays Gardener working on the current generation: last operation Processing, the kube-apiserver
// advertised (as Gardener does early in the Create operation).
func (g *Garden) Progress(name string) {
	g.ProgressTo(name, 40)
}

// ProgressTo plays Gardener reporting progress percent of the current operation, still Processing.
func (g *Garden) ProgressTo(name string, percent int32) {
	g.setOperation(name, shootstate.StateProcessing, percent, nil)
}

// Succeed plays Gardener finishing the current generation: last operation Succeeded (Create for a new shoot),
// hibernation state follows the request, last errors and a pending retry are cleared.
func (g *Garden) Succeed(name string) {
	g.setOperation(name, shootstate.StateSucceeded, 100, nil)
}

// Fail plays Gardener giving up on the current generation with the given codes.
func (g *Garden) Fail(name, description string, codes ...shootstate.ErrorCode) {
	g.setOperation(name, shootstate.StateFailed, 50, []shootstate.LastError{{Description: description, Codes: codes}})
}

func (g *Garden) setOperation(name string, state shootstate.OperationState, progress int32, errs []shootstate.LastError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	if !ok {
		return
	}
	typ := shootstate.OperationReconcile
	switch {
	case s.obs.Deleting():
		typ = shootstate.OperationDelete
	case !s.obs.EverSucceeded():
		typ = shootstate.OperationCreate
	}
	s.obs.ObservedGeneration = s.obs.Generation
	s.obs.LastOperation = &shootstate.Operation{Type: typ, State: state, Progress: progress, LastUpdate: g.clock.Now(),
		Description: fmt.Sprintf("%s %s", typ, state)}
	s.obs.LastErrors = errs
	s.obs.APIServerAdvertised = true
	s.retryOp = false
	if state == shootstate.StateSucceeded {
		s.obs.Hibernated = s.obs.HibernationRequested
	}
	g.touch(s)
}

// Hibernate plays someone hibernating a shoot (or waking it up) and Gardener finishing it: spec and status agree.
func (g *Garden) Hibernate(name string, on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.shoots[name]; ok {
		s.obs.HibernationRequested, s.obs.Hibernated = on, on
		g.touch(s)
	}
}

// FinishDeletion plays Gardener removing a shoot whose deletion was confirmed.
func (g *Garden) FinishDeletion(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	if !ok || !s.confirmed || s.obs.DeletionTimestamp == nil {
		return false
	}
	delete(g.shoots, name)
	return true
}

// EditRecord plays someone editing the deletion record of a shoot in the garden (a person, a stale backup).
func (g *Garden) EditRecord(name string, change func(*shootstate.PendingDeletion)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.shoots[name]; ok && s.obs.Marks.PendingDeletion != nil {
		change(s.obs.Marks.PendingDeletion)
		g.touch(s)
	}
}

// Observed returns the shoot as the garden holds it now, without a port call (no injected fault, not counted, no
// cache lag): for test oracles that judge what the operator did against the truth.
func (g *Garden) Observed(name string) (shootstate.Shoot, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	if !ok {
		return shootstate.Shoot{}, false
	}
	return copyShoot(s.obs), true
}

// ForgeRecord plays someone with write access to the shoots of the project writing a deletion record of their own
// on a shoot (the annotations only, consistent in itself, not through the operator): a shoot without a record
// gets one, a record is replaced.
func (g *Garden) ForgeRecord(name string, pd shootstate.PendingDeletion) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.shoots[name]
	if !ok || s.obs.DeletionTimestamp != nil {
		return false
	}
	s.obs.Marks.PendingDeletion = &pd
	g.touch(s)
	return true
}
