package runtimeconfig

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
)

// documentsGeneration is how many rendered documents a generation of Documents holds. A fleet keeps one document
// per runtime that changes only with its spec or its shoot's infrastructure, so two generations hold the documents of
// a fleet of this size whatever it changes; a larger fleet renders some of them again, as every pass did before.
const documentsGeneration = 16384

// Documents remembers rendered provisioning-info documents by their content, so that a pass whose document did not
// change does not render it again. Rendering is the larger part of a Runtime pass's allocations (yaml.v3's
// emitter, about 67 KB a document), and a Runtime pass runs on every Gardener report of its shoot
// (docs/operations/scale.md, "Work per event"). Only the part before the reconcile time is remembered; that line
// changes with every Gardener success and costs little. The zero value is ready to use and safe for concurrent use.
// Entries live two generations: memory is bounded by twice documentsGeneration documents, about 1.3 KB each.
type Documents struct {
	mu       sync.Mutex
	cur, old map[[sha256.Size]byte]string
	// generation is the size of a generation; 0: documentsGeneration (tests make it small).
	generation int
}

// Compute is runtimeconfig.Compute with the document's body taken from d when it was rendered before; a nil d
// renders it.
func (d *Documents) Compute(f Facts) (Desired, error) {
	body, tail, err := d.render(f)
	if err != nil {
		return Desired{}, err
	}
	return desired(f, body, tail), nil
}

// render returns the two parts of f's document (renderParts).
func (d *Documents) render(f Facts) (body, tail string, err error) {
	p := provisioningInfo(f)
	if d == nil {
		return p.renderParts()
	}
	if tail, err = renderReconcileTime(p.LastReconcileTime); err != nil {
		return "", "", err
	}
	key, err := documentKey(p)
	if err != nil {
		return p.renderParts() // not remembered: a document whose key cannot be encoded is rendered every time
	}
	if body, ok := d.lookup(key); ok {
		return body, tail, nil
	}
	if body, _, err = p.renderParts(); err != nil {
		return "", "", err
	}
	d.remember(key, body)
	return body, tail, nil
}

// documentKey identifies the document p renders, without its reconcile time: the digest of p's JSON encoding, which
// covers every field of the document (a field added later is covered without a change here) and encodes the
// infrastructure config's map with sorted keys, so equal documents have equal keys.
func documentKey(p ProvisioningInfo) ([sha256.Size]byte, error) {
	p.LastReconcileTime = ""
	b, err := json.Marshal(p)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("key of %s: %w", ProvisioningInfoName, err)
	}
	return sha256.Sum256(b), nil
}

func (d *Documents) lookup(key [sha256.Size]byte) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if body, ok := d.cur[key]; ok {
		return body, true
	}
	body, ok := d.old[key]
	if ok {
		d.putLocked(key, body) // still in use: carried into the current generation
	}
	return body, ok
}

func (d *Documents) remember(key [sha256.Size]byte, body string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.putLocked(key, body)
}

func (d *Documents) putLocked(key [sha256.Size]byte, body string) {
	limit := d.generation
	if limit == 0 {
		limit = documentsGeneration
	}
	if len(d.cur) >= limit {
		d.old, d.cur = d.cur, nil // what the old generation held and nobody asked for since is dropped
	}
	if d.cur == nil {
		d.cur = make(map[[sha256.Size]byte]string)
	}
	d.cur[key] = body
}

// size is the number of documents held (tests).
func (d *Documents) size() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cur) + len(d.old)
}
