package fake

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
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

// PutSquatter stores a Secret under a copy's name that is not the operator's copy (someone placed it first).
func (g *RegistryCacheGarden) PutSquatter(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.secrets[name] = registrycache.GardenSecret{Name: name, RuntimeID: "someone-else", Data: map[string][]byte{"username": []byte("x")}}
}

// Copies returns the names of the operator's copies of a runtime (what a label-selected list would show; the
// operator itself never lists: tests compare it with the ledger).
func (g *RegistryCacheGarden) Copies(runtimeID string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, s := range g.secrets {
		if s.RuntimeID == runtimeID {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// EnsureSecret implements ports.RegistryCacheGarden.
func (g *RegistryCacheGarden) EnsureSecret(_ context.Context, s registrycache.GardenSecret) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.foreign[s.Name] {
		return false, fmt.Errorf("Secret %s is not the operator's copy: %w", s.Name, ports.ErrCopyConflict)
	}
	got, ok := g.secrets[s.Name]
	if !ok {
		s.Data = maps.Clone(s.Data)
		g.secrets[s.Name] = s
		return true, nil
	}
	if got.RuntimeID != s.RuntimeID || got.CacheUID != s.CacheUID || !maps.EqualFunc(got.Data, s.Data, bytes.Equal) {
		return false, fmt.Errorf("Secret %s is not the operator's copy: %w", s.Name, ports.ErrCopyConflict)
	}
	return false, nil
}

// OwnedCopies implements ports.RegistryCredentialOwners.
func (g *RegistryCacheGarden) OwnedCopies(_ context.Context, runtimeID string, names []string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, n := range names {
		if s, ok := g.secrets[n]; ok && strings.HasPrefix(n, registrycache.SecretPrefix) && s.RuntimeID == runtimeID {
			out = append(out, n)
		}
	}
	return out, nil
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

// Resolver is a ports.UpstreamResolver answering from a table: a host in Unresolvable does not resolve (its value
// is the reason), every other name with a dot does. Like the real resolver it accepts IP addresses and refuses
// single-label names without a lookup, and it fails (Err, a cancelled context) rather than judge a name it could
// not look up.
type Resolver struct {
	Unresolvable map[string]string
	// Err, when set, is the failure of every lookup: no DNS server answers.
	Err error
}

// Resolve implements ports.UpstreamResolver.
func (r Resolver) Resolve(ctx context.Context, host string) (string, error) {
	if net.ParseIP(host) != nil {
		return "", nil
	}
	if !strings.Contains(strings.TrimSuffix(host, "."), ".") {
		return "a single-label name is not resolved", nil
	}
	if r.Err != nil {
		return "", fmt.Errorf("resolve %s: %w", host, r.Err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("resolve %s: %w", host, err)
	}
	return r.Unresolvable[host], nil
}
