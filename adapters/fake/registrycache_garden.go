package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheGarden is an in-memory ports.RegistryCacheGarden: the copies of credentials in the project and the
// registry caches of shoots (set by the test, as the Runtime controller and Gardener would).
type RegistryCacheGarden struct {
	mu      sync.Mutex
	foreign map[string]bool
	secrets map[string]registrycache.GardenSecret
	shoots  map[string]registrycache.ShootView
	// Deleted records deleted copies in order.
	Deleted []string
}

var _ ports.RegistryCacheGarden = (*RegistryCacheGarden)(nil)

// NewRegistryCacheGarden returns an empty project.
func NewRegistryCacheGarden() *RegistryCacheGarden {
	return &RegistryCacheGarden{foreign: map[string]bool{}, secrets: map[string]registrycache.GardenSecret{}, shoots: map[string]registrycache.ShootView{}}
}

// PutForeign stores a Secret the operator did not write (cloud credentials).
func (g *RegistryCacheGarden) PutForeign(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.foreign[name] = true
}

// Exists reports whether any Secret of that name exists (a copy or a foreign one).
func (g *RegistryCacheGarden) Exists(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, copyExists := g.secrets[name]
	return copyExists || g.foreign[name]
}

// SetShoot stores what a shoot holds (Exists is set); RemoveShoot forgets the shoot.
func (g *RegistryCacheGarden) SetShoot(name string, v registrycache.ShootView) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v.Exists = true
	g.shoots[name] = v
}

// RemoveShoot forgets a shoot (Gardener deleted it).
func (g *RegistryCacheGarden) RemoveShoot(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.shoots, name)
}

// Secret returns a stored copy with its data.
func (g *RegistryCacheGarden) Secret(name string) (registrycache.GardenSecret, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.secrets[name]
	return s, ok
}

// Secrets implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) Secrets(_ context.Context, runtimeID string) ([]registrycache.GardenSecret, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []registrycache.GardenSecret
	for _, s := range g.secrets {
		if s.RuntimeID == runtimeID {
			s.Data = nil
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b registrycache.GardenSecret) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// EnsureSecret implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) EnsureSecret(_ context.Context, s registrycache.GardenSecret) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.secrets[s.Name]; !ok {
		s.Data = maps.Clone(s.Data)
		g.secrets[s.Name] = s
	}
	return nil
}

// DeleteSecret implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) DeleteSecret(_ context.Context, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !strings.HasPrefix(name, registrycache.SecretPrefix) {
		return fmt.Errorf("refusing to delete Secret %s: not a copy of registry credentials", name)
	}
	if _, ok := g.secrets[name]; ok {
		delete(g.secrets, name)
		g.Deleted = append(g.Deleted, name)
	}
	return nil
}

// Shoot implements ports.RegistryCacheGarden; memory has no cache.
func (g *RegistryCacheGarden) Shoot(_ context.Context, name string, _ ports.ReadMode) (registrycache.ShootView, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.shoots[name]
	v.Caches, v.ReferencedSecrets = slices.Clone(v.Caches), slices.Clone(v.ReferencedSecrets)
	return v, nil
}

// Resolver is a ports.UpstreamResolver answering from a table: hosts in Unresolvable do not resolve.
type Resolver struct {
	Unresolvable map[string]string
}

// Resolve implements ports.UpstreamResolver.
func (r Resolver) Resolve(_ context.Context, host string) (string, error) {
	return r.Unresolvable[host], nil
}
