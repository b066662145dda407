package kube

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// MigrationRecordName is the DeletionRecord that marks the one-time migration as done (in the operator's
// namespace). A shoot name is a DNS label and has no dot, so no shoot's record can take this name.
const MigrationRecordName = "migration.kim"

// DeletionRecords implements ports.DeletionRecords with DeletionRecord objects in the KCP: one per deletion, in the
// Runtime's namespace, named after the shoot. Only the operator has write access to them.
type DeletionRecords struct {
	// Cached reads from the manager's cache; Live from the API server; Writer writes.
	Cached, Live client.Reader
	Writer       client.Client
	// Namespaces are the watched KCP namespaces: records are looked up only there, whatever namespace a shoot's
	// (editable) record names.
	Namespaces []string
	// Namespace holds the migration mark (the operator's namespace).
	Namespace string
}

var _ ports.DeletionRecords = (*DeletionRecords)(nil)

// Get implements ports.DeletionRecords. A cached miss is confirmed live.
func (d *DeletionRecords) Get(ctx context.Context, namespace, shootName string, mode ports.ReadMode) (deletion.KCPRecord, bool, error) {
	if !slices.Contains(d.Namespaces, namespace) || shootName == "" || shootName == MigrationRecordName {
		return deletion.KCPRecord{}, false, nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: shootName}
	obj := &imv1.DeletionRecord{}
	var err error = errNotRead
	if mode == ports.ReadCached && d.Cached != nil {
		err = d.Cached.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		err = d.Live.Get(ctx, key, obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return deletion.KCPRecord{}, false, nil
	case err != nil:
		return deletion.KCPRecord{}, false, transient("read deletion record "+key.String(), err)
	}
	return recordOf(obj), true, nil
}

func recordOf(obj *imv1.DeletionRecord) deletion.KCPRecord {
	return deletion.KCPRecord{RuntimeID: obj.Spec.RuntimeID, RuntimeNamespace: obj.Namespace, ShootName: obj.Name,
		ShootUID: obj.Spec.ShootUID, MarkedAt: obj.Spec.MarkedAt.UTC(), DueAt: obj.Spec.DueAt.UTC(),
		CredentialsBinding: obj.Spec.CredentialsBinding, BindingRelease: deletion.BindingRelease(obj.Spec.BindingRelease)}
}

// Put implements ports.DeletionRecords: create, or replace the spec of the record of the same shoot name with
// optimistic locking (a conflict is transient: the caller tries again).
func (d *DeletionRecords) Put(ctx context.Context, r deletion.KCPRecord) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if !slices.Contains(d.Namespaces, r.RuntimeNamespace) {
		return fmt.Errorf("store the deletion record of shoot %s: namespace %s is not watched by the operator", r.ShootName, r.RuntimeNamespace)
	}
	spec := imv1.DeletionRecordSpec{RuntimeID: r.RuntimeID, ShootUID: r.ShootUID,
		MarkedAt: metav1.NewTime(ceilSecond(r.MarkedAt)), DueAt: metav1.NewTime(ceilSecond(r.DueAt)),
		CredentialsBinding: r.CredentialsBinding, BindingRelease: string(r.BindingRelease)}
	obj := &imv1.DeletionRecord{ObjectMeta: metav1.ObjectMeta{Namespace: r.RuntimeNamespace, Name: r.ShootName,
		Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}, Spec: spec}
	err := d.Writer.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return transient("create deletion record "+r.RuntimeNamespace+"/"+r.ShootName, err)
		}
		return nil
	}
	existing := &imv1.DeletionRecord{}
	if err := d.Live.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return transient("read deletion record "+r.RuntimeNamespace+"/"+r.ShootName, err)
	}
	existing.Spec = spec
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	existing.Labels[wire.LabelManagedBy] = wire.ManagedByValue
	if err := d.Writer.Update(ctx, existing); err != nil {
		return transient("replace deletion record "+r.RuntimeNamespace+"/"+r.ShootName, err)
	}
	return nil
}

// ceilSecond rounds up to the second the API stores: a due time is never stored earlier than decided.
func ceilSecond(t time.Time) time.Time {
	s := t.UTC().Truncate(time.Second)
	if s.Before(t) {
		s = s.Add(time.Second)
	}
	return s
}

// RemoveForShoot implements ports.DeletionRecords; each delete carries the record's UID and resourceVersion as
// preconditions, so a record written meanwhile (for a new shoot of the name) stays.
func (d *DeletionRecords) RemoveForShoot(ctx context.Context, shootName, keepUID string) error {
	if shootName == "" || shootName == MigrationRecordName {
		return nil
	}
	for _, ns := range d.Namespaces {
		obj := &imv1.DeletionRecord{}
		key := client.ObjectKey{Namespace: ns, Name: shootName}
		reader := d.Cached
		if reader == nil {
			reader = d.Live
		}
		err := reader.Get(ctx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return transient("read deletion record "+key.String(), err)
		case keepUID != "" && obj.Spec.ShootUID == keepUID:
			continue
		}
		uid, rv := obj.UID, obj.ResourceVersion
		err = d.Writer.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return transient("remove deletion record "+key.String(), err)
		}
	}
	return nil
}

// Withdraw implements ports.DeletionRecords: live reads (a taken-back deletion's record must be gone before the
// shoot's mark is), each delete with the record's UID and resourceVersion as preconditions; a conflict means the
// record changed meanwhile and is looked at again.
func (d *DeletionRecords) Withdraw(ctx context.Context, shootName, shootUID string) error {
	if shootName == "" || shootName == MigrationRecordName || shootUID == "" {
		return nil
	}
	for _, ns := range d.Namespaces {
		key := client.ObjectKey{Namespace: ns, Name: shootName}
		for attempt := 0; ; attempt++ {
			obj := &imv1.DeletionRecord{}
			err := d.Live.Get(ctx, key, obj)
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				return transient("read deletion record "+key.String(), err)
			}
			if obj.Spec.ShootUID != shootUID {
				break
			}
			uid, rv := obj.UID, obj.ResourceVersion
			err = d.Writer.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
			if err == nil || apierrors.IsNotFound(err) {
				break
			}
			if !apierrors.IsConflict(err) || attempt >= 2 {
				return transient("withdraw deletion record "+key.String(), err)
			}
		}
	}
	return nil
}

// ForShoot implements ports.DeletionRecords.
func (d *DeletionRecords) ForShoot(ctx context.Context, shootName string) ([]deletion.KCPRecord, error) {
	if shootName == "" || shootName == MigrationRecordName {
		return nil, nil
	}
	reader := d.Cached
	if reader == nil {
		reader = d.Live
	}
	var out []deletion.KCPRecord
	for _, ns := range d.Namespaces {
		obj := &imv1.DeletionRecord{}
		key := client.ObjectKey{Namespace: ns, Name: shootName}
		err := reader.Get(ctx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, transient("read deletion record "+key.String(), err)
		}
		out = append(out, recordOf(obj))
	}
	return out, nil
}

// Migrated implements ports.DeletionRecords (a live read: it is asked once per start).
func (d *DeletionRecords) Migrated(ctx context.Context) (bool, error) {
	err := d.Live.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: MigrationRecordName}, &imv1.DeletionRecord{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, transient("read the deletion record migration mark", err)
	}
	return true, nil
}

// SetMigrated implements ports.DeletionRecords.
func (d *DeletionRecords) SetMigrated(ctx context.Context, at time.Time) error {
	t := metav1.NewTime(at.UTC().Truncate(time.Second))
	obj := &imv1.DeletionRecord{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: MigrationRecordName,
		Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}},
		Spec: imv1.DeletionRecordSpec{RuntimeID: "migration", ShootUID: "none", MarkedAt: t, DueAt: t}}
	if err := d.Writer.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return transient("record the deletion record migration as done", err)
	}
	return nil
}
