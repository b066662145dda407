package fake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// Garden is an in-memory Gardener project implementing ports.Shoots and ports.Seeds, with helpers that play
// Gardener's part (finish a reconcile, fail with codes, finish a deletion). Every shoot has a UID and a
// resourceVersion that moves with every change, so preconditions behave as on a real API server. With LagCache on,
// cached reads answer from the state of the last SyncCache, as an informer that has not caught up would. Safe for
// concurrent use.
type Garden struct {
	mu     sync.Mutex
	clock  ports.Clock
	shoots map[string]*gardenShoot
	seeds  map[string]bool
	// seedRegions maps seed names to regions.
	seedRegions map[string]string
	// profileZones maps "profile/region" to the zones of the region in the cloud profile, in its order.
	profileZones map[string][]string
	calls        map[string]int
	version      int
	uids         int
	// lag and cache implement cached reads that miss recent writes.
	lag    bool
	cache  map[string]gardenShoot
	log    []DeletionLog
	marks  []MarkLog
	writes []WriteLog
	// recordsGiven is the last InSync record given per shoot name (InSyncRecordGiven).
	recordsGiven map[string]string

	// Reject, when set, is consulted on every Apply; a non-nil error is returned wrapped in ErrShootRejected.
	Reject func(shoot.Spec) error
	// Err, when set, is consulted first by every method (by name, e.g. "Apply"); a non-nil error is returned as is.
	Err func(method string) error
}

// NewGarden returns an empty garden whose timestamps come from clock.
func NewGarden(clock ports.Clock) *Garden {
	return &Garden{clock: clock, shoots: map[string]*gardenShoot{}, seeds: map[string]bool{}, seedRegions: map[string]string{}, profileZones: map[string][]string{}, calls: map[string]int{},
		cache: map[string]gardenShoot{}}
}

var _ ports.Shoots = (*Garden)(nil)
var _ ports.Seeds = (*Garden)(nil)

func (g *Garden) begin(method string) error {
	g.calls[method]++
	if g.Err != nil {
		return g.Err(method)
	}
	return nil
}

// touch records a change of s: a new resourceVersion.
func (g *Garden) touch(s *gardenShoot) {
	g.version++
	s.obs.ResourceVersion = strconv.Itoa(g.version)
}

// wrote logs a write through the ports and records the change.
func (g *Garden) wrote(method string, s *gardenShoot) {
	g.writes = append(g.writes, WriteLog{Method: method, Shoot: s.obs.Name, UID: s.obs.UID})
	g.touch(s)
}

// newShoot stores a new shoot with a fresh UID.
func (g *Garden) newShoot(name string, s *gardenShoot) *gardenShoot {
	g.uids++
	s.obs.Exists, s.obs.Name, s.obs.UID = true, name, fmt.Sprintf("uid-%s-%d", name, g.uids)
	g.touch(s)
	g.shoots[name] = s
	return s
}

// Calls returns how often each method was called.
func (g *Garden) Calls() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.calls)
}

// InSyncRecordGiven is the record the last InSync of the shoot name was given (ShootApply.InSyncRecord).
func (g *Garden) InSyncRecordGiven(name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.recordsGiven[name]
}

// LagCache switches lagging cached reads on or off. On, cached reads answer from the state of the last SyncCache.
func (g *Garden) LagCache(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lag = on
	g.syncLocked()
}

// SyncCache lets the cache catch up with the garden.
func (g *Garden) SyncCache() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.syncLocked()
}

func (g *Garden) syncLocked() {
	g.cache = make(map[string]gardenShoot, len(g.shoots))
	for name, s := range g.shoots {
		c := *s
		c.obs = copyShoot(s.obs)
		g.cache[name] = c
	}
}

// read returns the shoot as a read in mode sees it.
func (g *Garden) read(name string, mode ports.ReadMode) (gardenShoot, bool) {
	if g.lag && mode == ports.ReadCached {
		s, ok := g.cache[name]
		return s, ok
	}
	s, ok := g.shoots[name]
	if !ok {
		return gardenShoot{}, false
	}
	return *s, true
}

// Get implements ports.ShootReader.
func (g *Garden) Get(_ context.Context, name string, mode ports.ReadMode) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Get"); err != nil {
		return shootstate.Shoot{}, err
	}
	live := mode == ports.ReadLive
	s, ok := g.read(name, mode)
	if !ok {
		return shootstate.Shoot{Live: live}, nil
	}
	out := copyShoot(s.obs)
	out.Live = live
	return out, nil
}

// Current implements ports.ShootReader from the last applied spec (cached).
func (g *Garden) Current(_ context.Context, name string) (*shoot.Current, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Current"); err != nil {
		return nil, err
	}
	s, ok := g.read(name, ports.ReadCached)
	if !ok {
		return nil, nil
	}
	cur := &shoot.Current{KubernetesVersion: s.spec.KubernetesVersion, HasInfrastructureConfig: len(s.infrastructureConfig) > 0,
		InfrastructureConfig: slices.Clone(s.infrastructureConfig)}
	for _, w := range s.spec.Workers {
		cur.Workers = append(cur.Workers, shoot.CurrentWorker{Name: w.Name, ImageName: w.ImageName, ImageVersion: w.ImageVersion, Zones: slices.Clone(w.Zones)})
	}
	for _, e := range s.spec.Extensions {
		cur.ExtensionTypes = append(cur.ExtensionTypes, e.Type)
	}
	cur.AuditLog = currentAuditLog(s.spec)
	return cur, nil
}

// currentAuditLog reads the audit log extension of spec with the credentials resource it references, as the
// Gardener adapter reads it from a shoot; nil: none.
func currentAuditLog(spec shoot.Spec) *shoot.CurrentAuditLog {
	for _, e := range spec.Extensions {
		c, ok := e.Config.(shoot.AuditLogExtensionConfig)
		if e.Type != shoot.ExtensionAuditLog || !ok {
			continue
		}
		cur := &shoot.CurrentAuditLog{TenantID: c.TenantID, ServiceURL: c.ServiceURL, ResourceName: c.SecretReferenceName,
			PolicyConfigMap: spec.AuditPolicyConfigMap}
		for _, r := range spec.Resources {
			if r.Name == c.SecretReferenceName {
				cur.SecretName = r.TargetName
			}
		}
		return cur
	}
	return nil
}

// Apply implements ports.ShootProvisioner: a new shoot is created (never taken over), a changed spec increments
// the generation as Gardener does.
func (g *Garden) Apply(_ context.Context, a ports.ShootApply) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Apply"); err != nil {
		return shootstate.Shoot{}, err
	}
	if g.Reject != nil {
		if err := g.Reject(a.Spec); err != nil {
			return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w: %w", a.Spec.Name, ports.ErrShootRejected, err)
		}
	}
	s, ok := g.shoots[a.Spec.Name]
	if ok && a.Precondition == (ports.Precondition{}) {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: it exists, the observation was stale: %w", a.Spec.Name, ports.ErrConflict)
	}
	if ok && (!s.obs.Marks.Managed || s.obs.Marks.RuntimeID != a.RuntimeID || s.obs.Marks.PendingDeletion != nil) {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s for runtime %s: %w", a.Spec.Name, a.RuntimeID, ports.ErrShootNotManaged)
	}
	pre := a.Precondition
	if ok && ((pre.UID != "" && pre.UID != s.obs.UID) || (pre.ResourceVersion != "" && pre.ResourceVersion != s.obs.ResourceVersion)) {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: computed from version %s, now %s: %w", a.Spec.Name, pre.ResourceVersion, s.obs.ResourceVersion, ports.ErrConflict)
	}
	if ok && a.HoldAdoptedChanges && s.obs.Marks.AppliedSpecHash == "" && !reflect.DeepEqual(s.spec, a.Spec) {
		// Adopted, never taken over (the fake records no spec hash of the previous system), and the spec differs.
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: the first apply after adopting it would change it: %w", a.Spec.Name, ports.ErrAdoptionReviewRequired)
	}
	if !ok {
		s = g.newShoot(a.Spec.Name, &gardenShoot{})
	}
	m := &s.obs.Marks
	changed := !ok || !reflect.DeepEqual(s.spec, a.Spec)
	if changed {
		s.obs.Generation++
		s.spec = a.Spec
	}
	if changed || m.AppliedRuntimeGeneration != a.RuntimeGeneration || m.AppliedSpecHash != a.SpecHash || m.Plan != a.Plan {
		g.wrote("Apply", s)
	}
	m.Managed, m.RuntimeID, m.AppliedRuntimeGeneration = true, a.RuntimeID, a.RuntimeGeneration
	m.AppliedSpecHash, m.Plan = a.SpecHash, a.Plan
	return copyShoot(s.obs), nil
}

// InSync implements ports.ShootProvisioner: the stored spec and marks equal what Apply(a) would store (cached).
// The record is a digest of the shoot's UID and of a; the fake compares every time (a record saves nothing here).
func (g *Garden) InSync(_ context.Context, a ports.ShootApply) (ports.SyncCheck, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("InSync"); err != nil {
		return ports.SyncCheck{}, err
	}
	if g.recordsGiven == nil {
		g.recordsGiven = map[string]string{}
	}
	g.recordsGiven[a.Spec.Name] = a.InSyncRecord
	s, ok := g.read(a.Spec.Name, ports.ReadCached)
	if !ok {
		return ports.SyncCheck{}, nil
	}
	m := s.obs.Marks
	if !m.Managed || m.RuntimeID != a.RuntimeID || m.AppliedRuntimeGeneration != a.RuntimeGeneration ||
		m.AppliedSpecHash != a.SpecHash || m.Plan != a.Plan || !reflect.DeepEqual(s.spec, a.Spec) {
		return ports.SyncCheck{}, nil
	}
	a.InSyncRecord, a.Precondition, a.HoldAdoptedChanges = "", ports.Precondition{}, false
	raw, err := json.Marshal(a)
	if err != nil {
		return ports.SyncCheck{InSync: true}, nil //nolint:nilerr // in sync, only without a record
	}
	sum := sha256.Sum256(append([]byte(s.obs.UID+"/"), raw...))
	return ports.SyncCheck{InSync: true, Record: hex.EncodeToString(sum[:16])}, nil
}

// managed returns a live managed shoot matching pre, or the port's error.
func (g *Garden) managed(method, name string, pre ports.Precondition) (*gardenShoot, error) {
	if err := g.begin(method); err != nil {
		return nil, err
	}
	s, ok := g.shoots[name]
	if !ok {
		return nil, fmt.Errorf("%s shoot %s: %w", method, name, ports.ErrShootNotFound)
	}
	if !s.obs.Marks.Managed {
		return nil, fmt.Errorf("%s shoot %s: %w", method, name, ports.ErrShootNotManaged)
	}
	if (pre.UID != "" && pre.UID != s.obs.UID) || (pre.ResourceVersion != "" && pre.ResourceVersion != s.obs.ResourceVersion) {
		return nil, fmt.Errorf("%s shoot %s: %w", method, name, ports.ErrConflict)
	}
	return s, nil
}

// RequestRetry implements ports.ShootProvisioner.
func (g *Garden) RequestRetry(_ context.Context, name string, attempt int, at time.Time) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RequestRetry", name, ports.Precondition{})
	if err != nil {
		return shootstate.Shoot{}, err
	}
	s.retryOp = true
	if op := s.obs.LastOperation; op != nil && op.State == shootstate.StateFailed {
		// Like the gardener-apiserver: a retry of a Failed shoot is a new generation for the gardenlet to reconcile.
		s.obs.Generation++
	}
	// The marks name the generation the retry produced, so the attempts of one spec keep counting.
	s.obs.Marks.RetryAttempts, s.obs.Marks.RetryShootGeneration, s.obs.Marks.RetryRequestedAt = attempt, s.obs.Generation, at
	g.wrote("RequestRetry", s)
	return copyShoot(s.obs), nil
}

// Adopt implements ports.ShootProvisioner.
func (g *Garden) Adopt(_ context.Context, name, runtimeID, plan string) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Adopt"); err != nil {
		return shootstate.Shoot{}, err
	}
	s, ok := g.shoots[name]
	if !ok {
		return shootstate.Shoot{}, fmt.Errorf("adopt shoot %s: %w", name, ports.ErrShootNotFound)
	}
	if s.obs.Marks.RuntimeID != runtimeID || runtimeID == "" {
		return shootstate.Shoot{}, fmt.Errorf("adopt shoot %s for runtime %s: %w", name, runtimeID, ports.ErrShootNotManaged)
	}
	if !s.obs.Marks.Managed {
		s.obs.Marks.Managed = true
		if s.obs.Marks.Plan == "" {
			s.obs.Marks.Plan = plan
		}
		g.wrote("Adopt", s)
	}
	out := copyShoot(s.obs)
	out.Live = true
	return out, nil
}

// SeedAvailable implements ports.Seeds.
func (g *Garden) SeedAvailable(_ context.Context, provider, region string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("SeedAvailable"); err != nil {
		return false, err
	}
	return g.seeds[provider+"/"+region], nil
}

// SeedRegion implements ports.Seeds.
func (g *Garden) SeedRegion(_ context.Context, seedName string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("SeedRegion"); err != nil {
		return "", err
	}
	return g.seedRegions[seedName], nil
}

// bindingUses maps every existing shoot to the credentials binding its spec names.
func (g *Garden) bindingUses() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]string{}
	for name, s := range g.shoots {
		if s.obs.Exists && s.spec.CredentialsBinding != "" {
			out[name] = s.spec.CredentialsBinding
		}
	}
	return out
}
