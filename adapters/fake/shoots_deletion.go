package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// MarkForDeletion implements ports.ShootDeletion; hibernation changes the spec, so the generation moves.
func (g *Garden) MarkForDeletion(_ context.Context, name string, m ports.DeletionMark) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("MarkForDeletion", name, m.Precondition)
	if err != nil {
		return shootstate.Shoot{}, err
	}
	rec := m.Record
	s.obs.Marks.PendingDeletion = &rec
	g.marks = append(g.marks, MarkLog{At: g.clock.Now(), Shoot: name, UID: s.obs.UID, Record: rec})
	s.restoreSpec = slices.Clone(m.RestoreSpec)
	if m.Hibernate && !s.obs.HibernationRequested {
		s.obs.HibernationRequested = true
		s.obs.Generation++
	}
	g.wrote("MarkForDeletion", s)
	out := copyShoot(s.obs)
	out.Live = true
	return out, nil
}

// CancelDeletion implements ports.ShootDeletion.
func (g *Garden) CancelDeletion(_ context.Context, name, runtimeID, plan string, pre ports.Precondition) (shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("CancelDeletion", name, pre)
	if err != nil {
		return shootstate.Shoot{}, err
	}
	if pd := s.obs.Marks.PendingDeletion; pd != nil && pd.RuntimeID != runtimeID {
		return shootstate.Shoot{}, fmt.Errorf("cancel deletion of shoot %s for runtime %s: the record names runtime %s: %w",
			name, runtimeID, pd.RuntimeID, ports.ErrShootNotManaged)
	}
	if s.obs.Deleting() {
		return shootstate.Shoot{}, fmt.Errorf("cancel deletion of shoot %s: Gardener deletes it already: %w", name, ports.ErrConflict)
	}
	if pd := s.obs.Marks.PendingDeletion; pd != nil && pd.Plan != "" {
		s.obs.Marks.Plan = pd.Plan // the window the deletion had: taking the cluster back keeps it
	}
	if plan != "" {
		s.obs.Marks.Plan = plan
	}
	s.obs.Marks.PendingDeletion = nil
	s.obs.Marks.RuntimeID = runtimeID
	s.restoreSpec = nil
	s.confirmed = false
	if s.obs.HibernationRequested {
		s.obs.HibernationRequested = false
		s.obs.Generation++
	}
	g.wrote("CancelDeletion", s)
	out := copyShoot(s.obs)
	out.Live = true
	return out, nil
}

// RestoreSpec implements ports.ShootDeletion.
func (g *Garden) RestoreSpec(_ context.Context, name string) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RestoreSpec", name, ports.Precondition{})
	if err != nil {
		return nil, err
	}
	return slices.Clone(s.restoreSpec), nil
}

// RequestRestore implements ports.ShootDeletion.
func (g *Garden) RequestRestore(_ context.Context, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("RequestRestore", name, ports.Precondition{})
	if err != nil {
		return err
	}
	if pd := s.obs.Marks.PendingDeletion; pd != nil && !pd.RestoreRequested {
		pd.RestoreRequested = true
		g.wrote("RequestRestore", s)
	}
	return nil
}

// Delete implements ports.ShootDeletion: confirmation and deletion, both under the precondition.
func (g *Garden) Delete(_ context.Context, name string, pre ports.Precondition) error {
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
	if (pre.UID != "" && pre.UID != s.obs.UID) || (pre.ResourceVersion != "" && pre.ResourceVersion != s.obs.ResourceVersion) {
		return fmt.Errorf("delete shoot %s: %w", name, ports.ErrConflict)
	}
	s.confirmed = true
	if s.obs.DeletionTimestamp == nil {
		now := g.clock.Now()
		s.obs.DeletionTimestamp = &now
		g.log = append(g.log, DeletionLog{At: now, Shoot: copyShoot(s.obs)})
	}
	g.wrote("Delete", s)
	return nil
}

// ForceDelete implements ports.ShootDeletion with the gardener-apiserver's rule: only on a deleting shoot whose
// last errors carry a code that allows it.
func (g *Garden) ForceDelete(_ context.Context, name string, pre ports.Precondition) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, err := g.managed("ForceDelete", name, pre)
	if err != nil {
		return err
	}
	if !s.obs.Deleting() || !shootstate.ForceDeletionAllowed(s.obs.Codes()) {
		return fmt.Errorf("force-delete shoot %s: %w: force-deletion needs a deletion timestamp and an accepted error code", name, ports.ErrShootRejected)
	}
	s.obs.ForceDeletionRequested = true
	g.log = append(g.log, DeletionLog{At: g.clock.Now(), Shoot: copyShoot(s.obs), Force: true})
	g.wrote("ForceDelete", s)
	return nil
}

// Marks returns every deletion record the garden stored, in order.
func (g *Garden) Marks() []MarkLog {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.marks)
}

// Shoots returns the names of all shoots, sorted.
func (g *Garden) Shoots() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.shoots))
	for n := range g.shoots {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Writes returns every write through the ports, in order.
func (g *Garden) Writes() []WriteLog {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.writes)
}

// Deletions returns every deletion (and force-deletion) the garden accepted, in order.
func (g *Garden) Deletions() []DeletionLog {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.log)
}

// ListManaged implements ports.ShootLister.
func (g *Garden) ListManaged(_ context.Context) ([]shootstate.Shoot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.begin("ListManaged"); err != nil {
		return nil, err
	}
	source := g.cache
	if !g.lag {
		source = map[string]gardenShoot{}
		for name, s := range g.shoots {
			source[name] = *s
		}
	}
	var out []shootstate.Shoot
	for _, s := range source {
		if s.obs.Marks.Managed {
			out = append(out, copyShoot(s.obs))
		}
	}
	slices.SortFunc(out, func(a, b shootstate.Shoot) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
