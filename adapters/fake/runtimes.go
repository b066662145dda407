package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/kyma-project/kim/core/ports"
)

// RestoreDocument is the restore document format of the fake registry: the identity of a Runtime, nothing else.
type RestoreDocument struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Shoot     string `json:"shoot"`
	Plan      string `json:"plan,omitempty"`
}

// Encode renders d as a restore document.
func (d RestoreDocument) Encode() []byte {
	raw, _ := json.Marshal(d) //nolint:errchkjson // a struct of strings always encodes
	return raw
}

// StoredRuntime is a Runtime in the in-memory KCP.
type StoredRuntime struct {
	RestoreDocument
	// Restored is true when the Runtime was created by Recreate.
	Restored bool
}

// Runtimes is an in-memory ports.RuntimeRegistry: the Runtimes of a KCP. Safe for concurrent use.
type Runtimes struct {
	mu       sync.Mutex
	runtimes map[string]StoredRuntime
	// Err, when set, is consulted first by every method (by name); a non-nil error is returned as is.
	Err func(method string) error
}

// NewRuntimes returns an empty registry.
func NewRuntimes() *Runtimes { return &Runtimes{runtimes: map[string]StoredRuntime{}} }

var _ ports.RuntimeRegistry = (*Runtimes)(nil)

// Claims implements ports.RuntimeRegistry.
func (r *Runtimes) Claims(_ context.Context, runtimeID, shootName string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		if err := r.Err("Claims"); err != nil {
			return false, err
		}
	}
	rt, ok := r.runtimes[runtimeID]
	return ok && rt.Shoot == shootName, nil
}

// Recreate implements ports.RuntimeRegistry for documents made by RestoreDocument.Encode.
func (r *Runtimes) Recreate(_ context.Context, req ports.RestoreRequest, dryRun bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		if err := r.Err("Recreate"); err != nil {
			return err
		}
	}
	var doc RestoreDocument
	if err := json.Unmarshal(req.Document, &doc); err != nil {
		return fmt.Errorf("decode restore document: %w: %w", ports.ErrInvalidRestoreDocument, err)
	}
	if doc.Name != req.RuntimeID || doc.Namespace != req.Namespace || doc.Shoot != req.ShootName {
		return fmt.Errorf("restore document describes %s/%s (shoot %s), the record %s/%s (shoot %s): %w",
			doc.Namespace, doc.Name, doc.Shoot, req.Namespace, req.RuntimeID, req.ShootName, ports.ErrInvalidRestoreDocument)
	}
	if _, ok := r.runtimes[doc.Name]; ok || dryRun {
		return nil
	}
	r.runtimes[doc.Name] = StoredRuntime{RestoreDocument: doc, Restored: true}
	return nil
}

// Put stores a Runtime, as KEB creates it.
func (r *Runtimes) Put(doc RestoreDocument) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtimes[doc.Name] = StoredRuntime{RestoreDocument: doc}
}

// Remove forgets a Runtime, as the API server does once its finalizers are gone.
func (r *Runtimes) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtimes, name)
}

// Get returns a stored Runtime.
func (r *Runtimes) Get(name string) (StoredRuntime, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.runtimes[name]
	return rt, ok
}

// List returns the stored Runtimes ordered by name.
func (r *Runtimes) List() []StoredRuntime {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]StoredRuntime, 0, len(r.runtimes))
	for _, rt := range r.runtimes {
		out = append(out, rt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
