package fake

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// Garden is an in-memory Gardener project implementing ports.Shoots and ports.Seeds, with helpers that play
// Gardener's part (finish a reconcile, fail with codes, finish a deletion). Safe for concurrent use.
type Garden struct {
	mu     sync.Mutex
	clock  ports.Clock
	shoots map[string]*gardenShoot
	seeds  map[string]bool
	calls  map[string]int

	// Reject, when set, is consulted on every Apply; a non-nil error is returned wrapped in ErrShootRejected.
	Reject func(shoot.Spec) error
	// Err, when set, is consulted first by every method (by name, e.g. "Apply"); a non-nil error is returned as is.
	Err func(method string) error
}

type gardenShoot struct {
	obs         cluster.Shoot
	spec        shoot.Spec
	restoreSpec []byte
	confirmed   bool
	retryOp     bool
}

// NewGarden returns an empty garden whose timestamps come from clock.
func NewGarden(clock ports.Clock) *Garden {
	return &Garden{clock: clock, shoots: map[string]*gardenShoot{}, seeds: map[string]bool{}, calls: map[string]int{}}
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

// Calls returns how often each method was called.
func (g *Garden) Calls() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int, len(g.calls))
	for k, v := range g.calls {
		out[k] = v
	}
	return out
}

// Get implements ports.Shoots.
func (g *Garden) Get(_ context.Context, name string) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Get"); err != nil {
		return cluster.Shoot{}, err
	}
	if s, ok := g.shoots[name]; ok {
		return copyShoot(s.obs), nil
	}
	return cluster.Shoot{}, nil
}

// Current implements ports.Shoots from the last applied spec.
func (g *Garden) Current(_ context.Context, name string) (*shoot.Current, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Current"); err != nil {
		return nil, err
	}
	s, ok := g.shoots[name]
	if !ok {
		return nil, nil
	}
	cur := &shoot.Current{KubernetesVersion: s.spec.KubernetesVersion}
	for _, w := range s.spec.Workers {
		cur.Workers = append(cur.Workers, shoot.CurrentWorker{Name: w.Name, ImageName: w.ImageName, ImageVersion: w.ImageVersion, Zones: slices.Clone(w.Zones)})
	}
	return cur, nil
}

// Apply implements ports.Shoots: a changed spec increments the generation as Gardener does.
func (g *Garden) Apply(_ context.Context, a ports.ShootApply) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Apply"); err != nil {
		return cluster.Shoot{}, err
	}
	if g.Reject != nil {
		if err := g.Reject(a.Spec); err != nil {
			return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w: %w", a.Spec.Name, ports.ErrShootRejected, err)
		}
	}
	s, ok := g.shoots[a.Spec.Name]
	if ok && !s.obs.Marks.Managed {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", a.Spec.Name, ports.ErrShootNotManaged)
	}
	if !ok {
		s = &gardenShoot{obs: cluster.Shoot{Exists: true, Name: a.Spec.Name}}
		g.shoots[a.Spec.Name] = s
	}
	if !ok || !reflect.DeepEqual(s.spec, a.Spec) {
		s.obs.Generation++
		s.spec = a.Spec
	}
	m := &s.obs.Marks
	m.Managed, m.RuntimeID, m.AppliedRuntimeGeneration = true, a.RuntimeID, a.RuntimeGeneration
	m.AppliedSpecHash = a.SpecHash
	return copyShoot(s.obs), nil
}

// InSync implements ports.Shoots: the stored spec and marks equal what Apply(a) would store.
func (g *Garden) InSync(_ context.Context, a ports.ShootApply) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("InSync"); err != nil {
		return false, err
	}
	s, ok := g.shoots[a.Spec.Name]
	if !ok {
		return false, nil
	}
	m := s.obs.Marks
	return m.Managed && m.RuntimeID == a.RuntimeID && m.AppliedRuntimeGeneration == a.RuntimeGeneration &&
		m.AppliedSpecHash == a.SpecHash && reflect.DeepEqual(s.spec, a.Spec), nil
}

func (g *Garden) managed(method, name string) (*gardenShoot, error) {
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
	return s, nil
}

// RequestRetry implements ports.Shoots.
func (g *Garden) RequestRetry(_ context.Context, name string, attempt int, at time.Time) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RequestRetry", name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	s.retryOp = true
	s.obs.Marks.RetryAttempts, s.obs.Marks.RetryShootGeneration, s.obs.Marks.RetryRequestedAt = attempt, s.obs.Generation, at
	return copyShoot(s.obs), nil
}

// MarkForDeletion implements ports.Shoots; hibernation changes the spec, so the generation moves.
func (g *Garden) MarkForDeletion(_ context.Context, name string, m ports.DeletionMark) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("MarkForDeletion", name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	rec := m.Record
	s.obs.Marks.PendingDeletion = &rec
	s.restoreSpec = slices.Clone(m.RestoreSpec)
	if m.Hibernate && !s.obs.HibernationRequested {
		s.obs.HibernationRequested = true
		s.obs.Generation++
	}
	return copyShoot(s.obs), nil
}

// CancelDeletion implements ports.Shoots.
func (g *Garden) CancelDeletion(_ context.Context, name, runtimeID string) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("CancelDeletion", name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	s.obs.Marks.PendingDeletion = nil
	s.obs.Marks.RuntimeID = runtimeID
	s.restoreSpec = nil
	if s.obs.HibernationRequested {
		s.obs.HibernationRequested = false
		s.obs.Generation++
	}
	return copyShoot(s.obs), nil
}

// RestoreSpec implements ports.Shoots.
func (g *Garden) RestoreSpec(_ context.Context, name string) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RestoreSpec", name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(s.restoreSpec), nil
}

// RequestRestore implements ports.Shoots.
func (g *Garden) RequestRestore(_ context.Context, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RequestRestore", name)
	if err != nil {
		return err
	}
	if s.obs.Marks.PendingDeletion != nil {
		s.obs.Marks.PendingDeletion.RestoreRequested = true
	}
	return nil
}

// Delete implements ports.Shoots.
func (g *Garden) Delete(_ context.Context, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Delete"); err != nil {
		return err
	}
	s, ok := g.shoots[name]
	if !ok {
		return nil
	}
	if !s.obs.Marks.Managed {
		return fmt.Errorf("delete shoot %s: %w", name, ports.ErrShootNotManaged)
	}
	s.confirmed = true
	if s.obs.DeletionTimestamp == nil {
		now := g.clock.Now()
		s.obs.DeletionTimestamp = &now
	}
	return nil
}

// ForceDelete implements ports.Shoots with the gardener-apiserver's rule: only on a deleting shoot whose last
// errors carry a code that allows it.
func (g *Garden) ForceDelete(_ context.Context, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("ForceDelete", name)
	if err != nil {
		return err
	}
	if !s.obs.Deleting() || !cluster.ForceDeletionAllowed(s.obs.Codes()) {
		return fmt.Errorf("force-delete shoot %s: %w: force-deletion needs a deletion timestamp and an accepted error code", name, ports.ErrShootRejected)
	}
	s.obs.ForceDeletionRequested = true
	return nil
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

// Adopt implements ports.Shoots.
func (g *Garden) Adopt(_ context.Context, name, runtimeID string) (cluster.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("Adopt"); err != nil {
		return cluster.Shoot{}, err
	}
	s, ok := g.shoots[name]
	if !ok {
		return cluster.Shoot{}, fmt.Errorf("adopt shoot %s: %w", name, ports.ErrShootNotFound)
	}
	if s.obs.Marks.RuntimeID != runtimeID {
		return cluster.Shoot{}, fmt.Errorf("adopt shoot %s for runtime %s: %w", name, runtimeID, ports.ErrShootNotManaged)
	}
	s.obs.Marks.Managed = true
	return copyShoot(s.obs), nil
}

func copyShoot(s cluster.Shoot) cluster.Shoot {
	out := s
	if s.LastOperation != nil {
		op := *s.LastOperation
		out.LastOperation = &op
	}
	out.LastErrors = slices.Clone(s.LastErrors)
	if s.DeletionTimestamp != nil {
		ts := *s.DeletionTimestamp
		out.DeletionTimestamp = &ts
	}
	if s.Marks.PendingDeletion != nil {
		pd := *s.Marks.PendingDeletion
		out.Marks.PendingDeletion = &pd
	}
	return out
}
