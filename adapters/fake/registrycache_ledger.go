package fake

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheLedger is an in-memory ports.RegistryCacheLedger.
type RegistryCacheLedger struct {
	mu      sync.Mutex
	records map[ports.RuntimeRef]map[string]registrycache.GardenSecret
}

var _ ports.RegistryCacheLedger = (*RegistryCacheLedger)(nil)

// NewRegistryCacheLedger returns an empty ledger.
func NewRegistryCacheLedger() *RegistryCacheLedger {
	return &RegistryCacheLedger{records: map[ports.RuntimeRef]map[string]registrycache.GardenSecret{}}
}

// Copies implements ports.RegistryCacheLedger; the ledger has no cache, both modes read the same record.
func (l *RegistryCacheLedger) Copies(_ context.Context, ref ports.RuntimeRef, _ ports.ReadMode) ([]registrycache.GardenSecret, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []registrycache.GardenSecret
	for _, s := range l.records[ref] {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b registrycache.GardenSecret) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Record implements ports.RegistryCacheLedger.
func (l *RegistryCacheLedger) Record(_ context.Context, ref ports.RuntimeRef, copies []registrycache.GardenSecret) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.records[ref] == nil {
		l.records[ref] = map[string]registrycache.GardenSecret{}
	}
	for _, c := range copies {
		l.records[ref][c.Name] = registrycache.GardenSecret{Name: c.Name, RuntimeID: ref.RuntimeID, ShootName: c.ShootName}
	}
	return nil
}

// Forget implements ports.RegistryCacheLedger.
func (l *RegistryCacheLedger) Forget(_ context.Context, ref ports.RuntimeRef, names []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range names {
		delete(l.records[ref], n)
	}
	if len(l.records[ref]) == 0 {
		delete(l.records, ref)
	}
	return nil
}

// Runtimes implements ports.RegistryCacheLedger.
func (l *RegistryCacheLedger) Runtimes(_ context.Context, namespace string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for ref := range l.records {
		if ref.Namespace == namespace {
			out = append(out, ref.RuntimeID)
		}
	}
	slices.Sort(out)
	return out, nil
}
