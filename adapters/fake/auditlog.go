package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
)

// AuditLogPool is an in-memory ports.AuditLogPool. Every write checks and moves the tenant's version, as the API
// server's resourceVersion does, so lost races behave as in production. Safe for concurrent use.
type AuditLogPool struct {
	mu      sync.Mutex
	tenants map[string]auditlog.Tenant
	version int
	// Err, when set, is consulted first by every method (by name, e.g. "Claim"); a non-nil error is returned as is.
	Err func(method string) error
	// Writes counts successful writes by method.
	Writes map[string]int
}

// NewAuditLogPool returns a pool holding tenants (their versions are assigned).
func NewAuditLogPool(tenants ...auditlog.Tenant) *AuditLogPool {
	p := &AuditLogPool{tenants: map[string]auditlog.Tenant{}, Writes: map[string]int{}}
	for _, t := range tenants {
		p.Put(t)
	}
	return p
}

var _ ports.AuditLogPool = (*AuditLogPool)(nil)

// Put stores t as the landscape would (a new or changed AuditLog), with a new version.
func (p *AuditLogPool) Put(t auditlog.Tenant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store(t)
}

func (p *AuditLogPool) store(t auditlog.Tenant) auditlog.Tenant {
	p.version++
	t.Version = strconv.Itoa(p.version)
	p.tenants[t.Name] = t
	return t
}

// SetState writes status.state of the stored tenant as the audit log manager does (a new version); false when
// there is no such tenant.
func (p *AuditLogPool) SetState(name string, state auditlog.State) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tenants[name]
	if ok {
		t.State = state
		p.store(t)
	}
	return ok
}

// Tenant returns the stored tenant.
func (p *AuditLogPool) Tenant(name string) (auditlog.Tenant, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tenants[name]
	return t, ok
}

// List implements ports.AuditLogPool; memory has no cache, both modes read the same state.
func (p *AuditLogPool) List(_ context.Context, _ ports.ReadMode) ([]auditlog.Tenant, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fail("List"); err != nil {
		return nil, err
	}
	out := slices.Collect(maps.Values(p.tenants))
	slices.SortFunc(out, func(a, b auditlog.Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Reserve implements ports.AuditLogPool.
func (p *AuditLogPool) Reserve(_ context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error) {
	return p.write("Reserve", t, func(s *auditlog.Tenant) { s.ReservedFor, s.ReservedAt = runtimeID, at.UTC().Truncate(time.Second) })
}

// Claim implements ports.AuditLogPool.
func (p *AuditLogPool) Claim(_ context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error) {
	return p.write("Claim", t, func(s *auditlog.Tenant) {
		if s.ReservedFor != runtimeID {
			s.ReservedFor, s.ReservedAt = runtimeID, at.UTC().Truncate(time.Second)
		}
		s.AssignedTo = runtimeID
	})
}

// Unreserve implements ports.AuditLogPool.
func (p *AuditLogPool) Unreserve(_ context.Context, t auditlog.Tenant) error {
	_, err := p.write("Unreserve", t, func(s *auditlog.Tenant) { s.ReservedFor, s.ReservedAt = "", time.Time{} })
	return err
}

// Release implements ports.AuditLogPool.
func (p *AuditLogPool) Release(_ context.Context, t auditlog.Tenant) error {
	_, err := p.write("Release", t, func(s *auditlog.Tenant) { s.Orphaned = true })
	return err
}

func (p *AuditLogPool) write(method string, t auditlog.Tenant, change func(*auditlog.Tenant)) (auditlog.Tenant, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fail(method); err != nil {
		return auditlog.Tenant{}, err
	}
	stored, ok := p.tenants[t.Name]
	if !ok || stored.Version != t.Version {
		return auditlog.Tenant{}, fmt.Errorf("%s audit log %s: %w", method, t.Name, ports.ErrConflict)
	}
	before := stored
	change(&stored)
	// The CRD's rules: spec.assignedToRuntimeID is immutable once set, spec.orphaned cannot be unset.
	if (before.AssignedTo != "" && stored.AssignedTo != before.AssignedTo) || (before.Orphaned && !stored.Orphaned) {
		return auditlog.Tenant{}, fmt.Errorf("%s audit log %s: the AuditLog's validation refuses the change", method, t.Name)
	}
	p.Writes[method]++
	return p.store(stored), nil
}

func (p *AuditLogPool) fail(method string) error {
	if p.Err != nil {
		return p.Err(method)
	}
	return nil
}

// AuditLogRuntimes is an in-memory ports.AuditLogRuntimes.
type AuditLogRuntimes struct {
	mu       sync.Mutex
	runtimes map[string]ports.AuditLogOwner
}

var _ ports.AuditLogRuntimes = (*AuditLogRuntimes)(nil)

// NewAuditLogRuntimes returns an empty KCP.
func NewAuditLogRuntimes() *AuditLogRuntimes {
	return &AuditLogRuntimes{runtimes: map[string]ports.AuditLogOwner{}}
}

// Set records the Runtime runtimeID (Exists is set).
func (r *AuditLogRuntimes) Set(runtimeID string, o ports.AuditLogOwner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o.Exists = true
	r.runtimes[runtimeID] = o
}

// Delete removes the Runtime runtimeID.
func (r *AuditLogRuntimes) Delete(runtimeID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtimes, runtimeID)
}

// Lookup implements ports.AuditLogRuntimes.
func (r *AuditLogRuntimes) Lookup(_ context.Context, runtimeID string) (ports.AuditLogOwner, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runtimes[runtimeID], nil
}

// KCPSecrets is an in-memory ports.AuditLogCredentials.
type KCPSecrets struct {
	mu      sync.Mutex
	secrets map[auditlog.SecretRef]ports.KCPSecret
	// Reads counts the Secrets read, found or not.
	Reads int
}

var _ ports.AuditLogCredentials = (*KCPSecrets)(nil)

// NewKCPSecrets returns a KCP without Secrets.
func NewKCPSecrets() *KCPSecrets {
	return &KCPSecrets{secrets: map[auditlog.SecretRef]ports.KCPSecret{}}
}

// Set stores a Secret without labels.
func (k *KCPSecrets) Set(ref auditlog.SecretRef, data map[string][]byte) {
	k.SetLabelled(ref, nil, data)
}

// SetLabelled stores a Secret with labels.
func (k *KCPSecrets) SetLabelled(ref auditlog.SecretRef, labels map[string]string, data map[string][]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.secrets[ref] = ports.KCPSecret{Labels: maps.Clone(labels), Data: maps.Clone(data)}
}

// Read implements ports.AuditLogCredentials.
func (k *KCPSecrets) Read(_ context.Context, ref auditlog.SecretRef) (ports.KCPSecret, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.Reads++
	s, ok := k.secrets[ref]
	if !ok {
		return ports.KCPSecret{}, fmt.Errorf("secret %s/%s: %w", ref.Namespace, ref.Name, ports.ErrSecretNotFound)
	}
	return ports.KCPSecret{Labels: maps.Clone(s.Labels), Data: maps.Clone(s.Data)}, nil
}

// RuntimeSecrets is an in-memory ports.RuntimeSecretWriter: the Secrets the operator wrote into runtimes.
type RuntimeSecrets struct {
	mu       sync.Mutex
	runtimes map[string]bool
	secrets  map[string]map[string][]byte // runtimeID/namespace/name -> data
	// Unreachable lists runtimes whose API server does not answer (as do runtimes never added).
	Unreachable map[string]bool
	// Writes counts writes that changed something.
	Writes int
}

var _ ports.RuntimeSecretWriter = (*RuntimeSecrets)(nil)

// NewRuntimeSecrets returns the runtimes runtimeIDs, without Secrets.
func NewRuntimeSecrets(runtimeIDs ...string) *RuntimeSecrets {
	r := &RuntimeSecrets{runtimes: map[string]bool{}, secrets: map[string]map[string][]byte{}, Unreachable: map[string]bool{}}
	for _, id := range runtimeIDs {
		r.runtimes[id] = true
	}
	return r
}

// EnsureSecret implements ports.RuntimeSecretWriter.
func (r *RuntimeSecrets) EnsureSecret(_ context.Context, runtimeID string, s ports.RuntimeSecret) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Unreachable[runtimeID] || !r.runtimes[runtimeID] {
		return false, fmt.Errorf("runtime %s: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	key := runtimeID + "/" + s.Namespace + "/" + s.Name
	if old, ok := r.secrets[key]; ok && maps.EqualFunc(old, s.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
		return false, nil
	}
	r.secrets[key] = maps.Clone(s.Data)
	r.Writes++
	return true, nil
}

// Secret returns a Secret written into a runtime.
func (r *RuntimeSecrets) Secret(runtimeID, namespace, name string) (map[string][]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.secrets[runtimeID+"/"+namespace+"/"+name]
	return maps.Clone(d), ok
}
