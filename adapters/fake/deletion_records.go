package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// DeletionRecords is an in-memory ports.DeletionRecords (its cache never lags). Safe for concurrent use.
type DeletionRecords struct {
	mu       sync.Mutex
	records  map[string]deletion.KCPRecord // namespace/shoot name -> record
	log      []deletion.KCPRecord
	migrated time.Time
	// Namespaces, when set, are the only namespaces records are stored in and read from (the watched ones).
	Namespaces []string
	// Err, when set, is consulted first by every method (by name); a non-nil error is returned as is.
	Err func(method string) error
}

var _ ports.DeletionRecords = (*DeletionRecords)(nil)

// NewDeletionRecords returns an empty store (the migration not done).
func NewDeletionRecords() *DeletionRecords {
	return &DeletionRecords{records: map[string]deletion.KCPRecord{}}
}

func (d *DeletionRecords) fail(method string) error {
	if d.Err != nil {
		return d.Err(method)
	}
	return nil
}

// Get implements ports.DeletionRecords.
func (d *DeletionRecords) Get(_ context.Context, namespace, shootName string, _ ports.ReadMode) (deletion.KCPRecord, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("Get"); err != nil {
		return deletion.KCPRecord{}, false, err
	}
	if len(d.Namespaces) > 0 && !slices.Contains(d.Namespaces, namespace) {
		return deletion.KCPRecord{}, false, nil
	}
	r, ok := d.records[namespace+"/"+shootName]
	return r, ok, nil
}

// Put implements ports.DeletionRecords.
func (d *DeletionRecords) Put(_ context.Context, r deletion.KCPRecord) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("Put"); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if len(d.Namespaces) > 0 && !slices.Contains(d.Namespaces, r.RuntimeNamespace) {
		return fmt.Errorf("store the deletion record of shoot %s: namespace %s is not watched", r.ShootName, r.RuntimeNamespace)
	}
	d.records[r.RuntimeNamespace+"/"+r.ShootName] = r
	d.log = append(d.log, r)
	return nil
}

// RemoveForShoot implements ports.DeletionRecords.
func (d *DeletionRecords) RemoveForShoot(_ context.Context, shootName, keepUID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("RemoveForShoot"); err != nil {
		return err
	}
	for k, r := range d.records {
		if r.ShootName == shootName && (keepUID == "" || r.ShootUID != keepUID) {
			delete(d.records, k)
		}
	}
	return nil
}

// Withdraw implements ports.DeletionRecords.
func (d *DeletionRecords) Withdraw(_ context.Context, shootName, shootUID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("Withdraw"); err != nil {
		return err
	}
	for k, r := range d.records {
		if r.ShootName == shootName && r.ShootUID == shootUID {
			delete(d.records, k)
		}
	}
	return nil
}

// ForShoot implements ports.DeletionRecords.
func (d *DeletionRecords) ForShoot(_ context.Context, shootName string) ([]deletion.KCPRecord, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("ForShoot"); err != nil {
		return nil, err
	}
	var out []deletion.KCPRecord
	for _, r := range d.records {
		if r.ShootName == shootName {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b deletion.KCPRecord) int { return strings.Compare(a.RuntimeNamespace, b.RuntimeNamespace) })
	return out, nil
}

// Migrated implements ports.DeletionRecords.
func (d *DeletionRecords) Migrated(context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("Migrated"); err != nil {
		return false, err
	}
	return !d.migrated.IsZero(), nil
}

// SetMigrated implements ports.DeletionRecords.
func (d *DeletionRecords) SetMigrated(_ context.Context, at time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail("SetMigrated"); err != nil {
		return err
	}
	if d.migrated.IsZero() {
		d.migrated = at
	}
	return nil
}

// Written returns every record Put stored, in order (for tests: the due times the KCP ever held).
func (d *DeletionRecords) Written() []deletion.KCPRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

// All returns the records stored now.
func (d *DeletionRecords) All() []deletion.KCPRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]deletion.KCPRecord, 0, len(d.records))
	for _, r := range d.records {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b deletion.KCPRecord) int { return a.MarkedAt.Compare(b.MarkedAt) })
	return out
}
