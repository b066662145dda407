package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheRuntimes is an in-memory ports.RegistryCacheRuntimes: Runtimes with their spec.imageRegistryCache,
// and whether another field manager owns that field.
type RegistryCacheRuntimes struct {
	mu       sync.Mutex
	runtimes map[ports.RuntimeRef]ports.RegistryCacheRuntime
	// OwnedByOthers lists Runtimes whose spec.imageRegistryCache another field manager owns.
	OwnedByOthers map[ports.RuntimeRef]bool
	// Applies counts ApplyEntries calls that wrote.
	Applies int
}

var _ ports.RegistryCacheRuntimes = (*RegistryCacheRuntimes)(nil)

// NewRegistryCacheRuntimes returns a KCP without Runtimes.
func NewRegistryCacheRuntimes() *RegistryCacheRuntimes {
	return &RegistryCacheRuntimes{runtimes: map[ports.RuntimeRef]ports.RegistryCacheRuntime{}, OwnedByOthers: map[ports.RuntimeRef]bool{}}
}

// Set stores a Runtime (Exists is set).
func (r *RegistryCacheRuntimes) Set(ref ports.RuntimeRef, rt ports.RegistryCacheRuntime) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt.Exists = true
	r.runtimes[ref] = rt
}

// Delete removes a Runtime.
func (r *RegistryCacheRuntimes) Delete(ref ports.RuntimeRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtimes, ref)
}

// Get implements ports.RegistryCacheRuntimes.
func (r *RegistryCacheRuntimes) Get(_ context.Context, ref ports.RuntimeRef) (ports.RegistryCacheRuntime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt := r.runtimes[ref]
	rt.Entries = slices.Clone(rt.Entries)
	return rt, nil
}

// ApplyEntries implements ports.RegistryCacheRuntimes.
func (r *RegistryCacheRuntimes) ApplyEntries(_ context.Context, ref ports.RuntimeRef, entries []registrycache.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.runtimes[ref]
	switch {
	case !ok:
		return fmt.Errorf("runtime %s: not found", ref)
	case r.OwnedByOthers[ref] && !registrycache.EntriesEqual(rt.Entries, entries):
		return fmt.Errorf("runtime %s spec.imageRegistryCache: %w", ref, ports.ErrFieldOwnedByOthers)
	}
	rt.Entries, rt.Managed = slices.Clone(entries), len(entries) > 0
	if len(entries) == 0 {
		rt.Entries = nil
	}
	r.runtimes[ref] = rt
	r.Applies++
	return nil
}

// RegistryCacheSource is an in-memory ports.RegistryCacheSource: per runtime, its Kyma resource, RegistryCacheConfig
// objects and Secrets, and the status the operator wrote.
type RegistryCacheSource struct {
	mu       sync.Mutex
	runtimes map[string]bool
	configs  map[string]map[registrycache.Key]registrycache.Config
	secrets  map[string]map[registrycache.Key]map[string][]byte
	// kymas are the runtimes' Kyma resources (spec.modules names); a runtime absent here has no Kyma CRD, one
	// with a nil entry has the CRD but no Kyma resource.
	kymas map[string][]string
	// Unreachable lists runtimes whose API server does not answer.
	Unreachable map[string]bool
	// StatusWrites counts SetStatus calls that wrote.
	StatusWrites int
	// Limits are the source's limits; only MaxConfigs is enforced (an in-memory list has no bytes on a wire).
	// Zero: registrycache's default.
	Limits registrycache.Limits
}

var _ ports.RegistryCacheSource = (*RegistryCacheSource)(nil)

// NewRegistryCacheSource returns the runtimes runtimeIDs without objects; other runtimes do not answer.
func NewRegistryCacheSource(runtimeIDs ...string) *RegistryCacheSource {
	s := &RegistryCacheSource{runtimes: map[string]bool{}, configs: map[string]map[registrycache.Key]registrycache.Config{},
		secrets: map[string]map[registrycache.Key]map[string][]byte{}, kymas: map[string][]string{}, Unreachable: map[string]bool{}}
	for _, id := range runtimeIDs {
		s.runtimes[id] = true
	}
	return s
}

func (s *RegistryCacheSource) unreachable(runtimeID string) error {
	if s.Unreachable[runtimeID] || !s.runtimes[runtimeID] {
		return fmt.Errorf("runtime %s: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	return nil
}

// PutConfig creates or changes a RegistryCacheConfig as the customer would: a changed spec gets a new generation.
func (s *RegistryCacheSource) PutConfig(runtimeID string, c registrycache.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.configs[runtimeID] == nil {
		s.configs[runtimeID] = map[registrycache.Key]registrycache.Config{}
	}
	old, ok := s.configs[runtimeID][c.Key()]
	c.Status = old.Status
	c.Generation = old.Generation + 1
	if ok && old.SecretName == c.SecretName && registrycache.CacheEqual(old.Cache, c.Cache) {
		c.Generation = old.Generation
	}
	if c.UID == "" {
		c.UID = "uid-" + c.Namespace + "-" + c.Name
	}
	s.configs[runtimeID][c.Key()] = c
}

// PutKyma installs the Kyma CRD in the runtime and writes its Kyma resource with these modules in spec.modules.
func (s *RegistryCacheSource) PutKyma(runtimeID string, modules ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kymas[runtimeID] = append([]string{}, modules...)
}

// DeleteKyma removes the runtime's Kyma resource; its CRD stays.
func (s *RegistryCacheSource) DeleteKyma(runtimeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kymas[runtimeID] = nil
}

// RemoveKymaCRD removes the runtime's Kyma CRD (and with it the resource).
func (s *RegistryCacheSource) RemoveKymaCRD(runtimeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.kymas, runtimeID)
}

// ModuleEnabled implements ports.RegistryCacheSource.
func (s *RegistryCacheSource) ModuleEnabled(_ context.Context, runtimeID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unreachable(runtimeID); err != nil {
		return false, err
	}
	modules, crd := s.kymas[runtimeID]
	switch {
	case !crd:
		return false, nil
	case modules == nil:
		return false, fmt.Errorf("the Kyma resource %s/%s in runtime %s: not found: %w", registrycache.KymaNamespace, registrycache.KymaName,
			runtimeID, ports.ErrTransient)
	}
	return slices.Contains(modules, registrycache.ModuleName), nil
}

// DeleteConfig removes a RegistryCacheConfig.
func (s *RegistryCacheSource) DeleteConfig(runtimeID string, k registrycache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.configs[runtimeID], k)
}

// PutSecret creates or replaces a Secret; nil data deletes it.
func (s *RegistryCacheSource) PutSecret(runtimeID string, k registrycache.Key, data map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets[runtimeID] == nil {
		s.secrets[runtimeID] = map[registrycache.Key]map[string][]byte{}
	}
	if data == nil {
		delete(s.secrets[runtimeID], k)
		return
	}
	s.secrets[runtimeID][k] = maps.Clone(data)
}

// Status returns the status of a RegistryCacheConfig.
func (s *RegistryCacheSource) Status(runtimeID string, k registrycache.Key) registrycache.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configs[runtimeID][k].Status
}

// Configs implements ports.RegistryCacheSource.
func (s *RegistryCacheSource) Configs(_ context.Context, runtimeID string) ([]registrycache.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unreachable(runtimeID); err != nil {
		return nil, err
	}
	out := slices.Collect(maps.Values(s.configs[runtimeID]))
	slices.SortFunc(out, func(a, b registrycache.Config) int { return strings.Compare(a.Key().String(), b.Key().String()) })
	if lim := s.Limits.OrDefaults(); len(out) > lim.MaxConfigs {
		return out[:lim.MaxConfigs], lim.TooMany()
	}
	return out, nil
}

// Credentials implements ports.RegistryCacheSource.
func (s *RegistryCacheSource) Credentials(_ context.Context, runtimeID string, k registrycache.Key) (registrycache.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unreachable(runtimeID); err != nil {
		return registrycache.Credentials{}, err
	}
	data, ok := s.secrets[runtimeID][k]
	return registrycache.Credentials{Found: ok, Data: maps.Clone(data)}, nil
}

// SetStatus implements ports.RegistryCacheSource.
func (s *RegistryCacheSource) SetStatus(_ context.Context, runtimeID string, c registrycache.Config, st registrycache.Status, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unreachable(runtimeID); err != nil {
		return err
	}
	stored, ok := s.configs[runtimeID][c.Key()]
	switch {
	case !ok:
		return nil
	case stored.Generation != c.Generation:
		return fmt.Errorf("RegistryCacheConfig %s: %w", c.Key(), ports.ErrConflict)
	}
	stored.Status = st
	s.configs[runtimeID][c.Key()] = stored
	s.StatusWrites++
	return nil
}
