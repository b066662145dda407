package usecase

// The take-back of a deletion (lifecycle.ActionRestoreCluster) undoes what the teardown did to the credentials
// binding; provision.go decides and applies, this file holds that undo.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// restoreBinding removes the dirty label the teardown set on the credentials binding of the deletion of shoot uid
// that is being taken back, and records that in the deletion's KCP record, so a retry does not remove a label
// someone else sets later. A label it did not set (the record says so) stays, and so does one another deletion
// naming the binding holds within its hold (deletion.OnRestore).
func (p *Provisioner) restoreBinding(ctx context.Context, namespace, shootName, uid string, now time.Time, res *ProvisionResult) error {
	if p.Bindings == nil || p.Records == nil {
		return nil
	}
	if p.Clock != nil {
		server, err := p.Clock.ServerNow(ctx)
		if err != nil {
			return fmt.Errorf("read the garden's time before restoring credentials binding of shoot %s: %w", shootName, err)
		}
		if server.Before(now) {
			now = server // an operator clock running ahead must not end another deletion's hold early
		}
	}
	rec, found, err := p.Records.Get(ctx, namespace, shootName, ports.ReadLive)
	if err != nil {
		return fmt.Errorf("read the deletion record of shoot %s to restore its credentials binding: %w", shootName, err)
	}
	if !found || rec.ShootUID != uid || rec.CredentialsBinding == "" || !rec.BindingRelease.Owned() {
		return nil
	}
	for range 5 {
		b, err := p.Bindings.Get(ctx, rec.CredentialsBinding)
		if err != nil {
			return fmt.Errorf("read credentials binding %s to restore it: %w", rec.CredentialsBinding, err)
		}
		o := deletion.HoldObservation{Binding: b}
		d := deletion.OnRestore(o, rec.BindingRelease, now)
		if d.Step == deletion.BindingListUsers {
			if o, err = bindingUsers(ctx, p.Shoots, p.Bindings, p.Records, p.Policy, shootName, b); err != nil {
				return err
			}
			d = deletion.OnRestore(o, rec.BindingRelease, now)
		}
		if d.Step == deletion.BindingRemoveDirty {
			err := p.Bindings.RemoveDirty(ctx, rec.CredentialsBinding, b.ResourceVersion)
			if errors.Is(err, ports.ErrConflict) {
				continue
			}
			if err != nil {
				return fmt.Errorf("remove the dirty label of credentials binding %s: %w", rec.CredentialsBinding, err)
			}
			res.Events = append(res.Events, Event{Reason: EventBindingRestored, Message: d.Message})
		}
		rec.BindingRelease = deletion.BindingUntouched
		if err := p.Records.Put(ctx, rec); err != nil {
			return fmt.Errorf("record the restore of credentials binding %s: %w", rec.CredentialsBinding, err)
		}
		return nil
	}
	return fmt.Errorf("remove the dirty label of credentials binding %s: %w: it kept changing", rec.CredentialsBinding, ports.ErrConflict)
}
