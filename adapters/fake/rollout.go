package fake

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/kyma-project/kim/core/ports"
)

// RuntimeBootstrapRecords is an in-memory ports.RuntimeBootstrapLister: what the Runtimes of a KCP record, set by
// the test as the controller would write it into their status. Safe for concurrent use.
type RuntimeBootstrapRecords struct {
	mu      sync.Mutex
	records map[string]ports.RuntimeBootstrap // namespace/name
	// Err, when set, is returned by ListBootstrap.
	Err error
	// Lists counts the walks over the fleet.
	Lists int
}

// NewRuntimeBootstrapRecords returns a KCP without Runtimes.
func NewRuntimeBootstrapRecords() *RuntimeBootstrapRecords {
	return &RuntimeBootstrapRecords{records: map[string]ports.RuntimeBootstrap{}}
}

var _ ports.RuntimeBootstrapLister = (*RuntimeBootstrapRecords)(nil)

// Put stores a Runtime's record (a new one, or its status changed).
func (r *RuntimeBootstrapRecords) Put(rec ports.RuntimeBootstrap) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records[rec.Namespace+"/"+rec.RuntimeID] = rec
}

// Delete forgets a Runtime.
func (r *RuntimeBootstrapRecords) Delete(namespace, runtimeID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.records, namespace+"/"+runtimeID)
}

// Get returns a Runtime's record.
func (r *RuntimeBootstrapRecords) Get(namespace, runtimeID string) (ports.RuntimeBootstrap, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.records[namespace+"/"+runtimeID]
	return rec, ok
}

// ListBootstrap implements ports.RuntimeBootstrapLister.
func (r *RuntimeBootstrapRecords) ListBootstrap(context.Context) ([]ports.RuntimeBootstrap, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Lists++
	if r.Err != nil {
		return nil, r.Err
	}
	keys := slices.Sorted(maps.Keys(r.records))
	out := make([]ports.RuntimeBootstrap, 0, len(keys))
	for _, k := range keys {
		out = append(out, r.records[k])
	}
	return out, nil
}
