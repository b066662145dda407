package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// Teardown deletes a Runtime safely: it removes the access objects, confirms the shoot live, adopts a
// predecessor's shoot, marks (and hibernates) the shoot, and only then lets the Runtime go. The cluster itself is
// deleted later by the reaper, after the window.
type Teardown struct {
	Shoots ports.Shoots
	Access ports.AccessObjects
	// Records stores the KCP's record of the deletion before the Runtime goes: the reaper deletes no shoot whose
	// record on the shoot has no matching record in the KCP.
	Records ports.DeletionRecords
	Policy  deletion.Policy
	// Clock is the garden API server's time. The deletion is recorded at the later of it and the operator's
	// time: an operator clock running behind would otherwise record a window that ends early in real time.
	Clock ports.ServerClock
	// Configurator, when set, forgets the runtime (its client) once the Runtime may go.
	Configurator ports.RuntimeConfigurator
	// Bindings, when set, labels the runtime's credentials binding dirty before the Runtime goes, so KEB's
	// deprovisioning step (which waits at most an hour for the shoot to disappear) finishes at once while the
	// shoot waits out its window (docs/adr/0005). nil: bindings are not touched.
	Bindings ports.CredentialsBindings
}

// TeardownRequest is a Runtime being deleted.
type TeardownRequest struct {
	RuntimeID, Namespace, ShootName string
	// Plan is the broker plan name label.
	Plan string
	// EverReady is status.provisioningCompleted.
	EverReady bool
	// RestoreDocument is the Runtime as it can be created again (without secrets).
	RestoreDocument []byte
	// CredentialsBinding is spec.shoot.secretBindingName: the binding KEB releases after the Runtime is gone.
	CredentialsBinding string
	// DeletionStarted is the Runtime's deletion timestamp; labelling the binding is given up
	// deletion.BindingReleaseTimeout after it.
	DeletionStarted time.Time
}

// TeardownResult says whether the Runtime may go (Release), when to look again otherwise, and what happened.
type TeardownResult struct {
	// AccessRemoved is true once the GardenerCluster and the kubeconfig Secret are gone.
	AccessRemoved bool
	Release       bool
	RequeueAfter  time.Duration
	Message       string
	Events        []Event
}

// AccessRemovalRecheck is how soon a deleting Runtime looks again while its GardenerCluster's finalizer runs.
const AccessRemovalRecheck = 2 * time.Second

// Run performs the next steps of deleting req at now.
func (t *Teardown) Run(ctx context.Context, req TeardownRequest, now time.Time) (TeardownResult, error) {
	gone, err := t.Access.Remove(ctx, req.Namespace, req.RuntimeID)
	if err != nil {
		return TeardownResult{}, fmt.Errorf("remove access of runtime %s: %w", req.RuntimeID, err)
	}
	in := deletion.RuntimeInput{RuntimeID: req.RuntimeID, Namespace: req.Namespace, Plan: req.Plan, EverReady: req.EverReady,
		AccessRemoved: gone, RestoreDocumentSize: len(req.RestoreDocument)}
	res := TeardownResult{AccessRemoved: gone}
	serverChecked := false
	var recorded *deletion.KCPRecord // stored in this run
	for range 6 {
		d := deletion.OnRuntimeDeleted(in, t.Policy, now)
		res.Message = d.Message
		// The mark and the KCP record are written at the garden's time if the operator's clock runs behind.
		recording := d.Action == deletion.ActionMarkShoot || (d.Action == deletion.ActionRelease && d.KCPRecord != nil)
		if recording && !serverChecked && t.Clock != nil {
			server, err := t.Clock.ServerNow(ctx)
			if err != nil {
				return res, fmt.Errorf("read the garden's time before recording the deletion of shoot %s: %w", req.ShootName, err)
			}
			now, serverChecked = later(now, server), true
			continue
		}
		switch d.Action {
		case deletion.ActionRemoveAccess:
			res.RequeueAfter = AccessRemovalRecheck
			return res, nil
		case deletion.ActionConfirmShoot:
			if in.Shoot, err = t.Shoots.Get(ctx, req.ShootName, ports.ReadLive); err != nil {
				return res, fmt.Errorf("confirm shoot %s: %w", req.ShootName, err)
			}
		case deletion.ActionAdoptShoot:
			if in.Shoot, err = t.Shoots.Adopt(ctx, req.ShootName, req.RuntimeID, req.Plan); err != nil {
				return res, fmt.Errorf("adopt shoot %s before marking it: %w", req.ShootName, err)
			}
			res.Events = append(res.Events, Event{Reason: EventShootAdopted, Message: d.Message})
		case deletion.ActionMarkShoot:
			mark := ports.DeletionMark{Record: *d.Record, Hibernate: d.Hibernate,
				Precondition: ports.Precondition{UID: in.Shoot.UID}}
			if d.KeepRestoreDocument {
				mark.RestoreSpec = req.RestoreDocument
			} else {
				res.Events = append(res.Events, Event{Warning: true, Reason: EventRestoreDocumentDropped, Message: d.Message})
			}
			// The KCP's record first: the reaper acts on the mark's watch event and must find it then.
			if err := t.Records.Put(ctx, *d.KCPRecord); err != nil {
				return res, fmt.Errorf("record the deletion of runtime %s in the KCP: %w", req.RuntimeID, err)
			}
			recorded = d.KCPRecord
			marked, err := t.Shoots.MarkForDeletion(ctx, req.ShootName, mark)
			if err != nil {
				return res, fmt.Errorf("mark shoot %s for deletion: %w", req.ShootName, err)
			}
			res.Events = append(res.Events, Event{Reason: EventShootMarked, Message: d.Message})
			in.Shoot = marked
		case deletion.ActionRelease:
			if d.KCPRecord != nil {
				// Only a shoot marked for this runtime keeps its cluster: its binding is released here, before KEB
				// sees the Runtime gone and runs its own step.
				rec := *d.KCPRecord
				if err := t.releaseBinding(ctx, req, &rec, &recorded, &res, now); err != nil {
					return res, err
				}
				if recorded == nil || *recorded != rec {
					if err := t.Records.Put(ctx, rec); err != nil {
						return res, fmt.Errorf("record the deletion of runtime %s in the KCP: %w", req.RuntimeID, err)
					}
				}
			}
			res.Release = true
			if t.Configurator != nil {
				t.Configurator.Forget(req.RuntimeID)
			}
			return res, nil
		}
	}
	return res, fmt.Errorf("deletion of runtime %s did not converge: %s", req.RuntimeID, res.Message)
}

// releaseBinding labels the credentials binding of req dirty, recording the intent in the KCP record first (so a
// crash between the write and the record still knows the label is this deletion's), and sets rec's binding fields
// to what was done. Failures are retried (an error) until deletion.BindingReleaseTimeout after the deletion
// started; then the Runtime goes without the label, with a warning: holding it longer would fail KEB's
// deprovisioning anyway, at its Runtime-deletion step instead of its binding step.
func (t *Teardown) releaseBinding(ctx context.Context, req TeardownRequest, rec *deletion.KCPRecord, recorded **deletion.KCPRecord,
	res *TeardownResult, now time.Time) error {
	if t.Bindings == nil || req.CredentialsBinding == "" {
		return nil
	}
	rec.CredentialsBinding = req.CredentialsBinding
	state := deletion.BindingUntouched
	stored, found, err := t.Records.Get(ctx, req.Namespace, req.ShootName, ports.ReadLive)
	if err != nil {
		return fmt.Errorf("read the deletion record of shoot %s before releasing its credentials binding: %w", req.ShootName, err)
	}
	if found && stored.ShootUID == rec.ShootUID && stored.RuntimeID == rec.RuntimeID && stored.CredentialsBinding == req.CredentialsBinding {
		state = stored.BindingRelease
	}
	giveUp := func(cause error) error {
		if !deletion.BindingGivenUp(req.DeletionStarted, now) {
			return cause
		}
		rec.BindingRelease = deletion.BindingNotReleased
		res.Events = append(res.Events, Event{Warning: true, Reason: EventBindingNotReleased, Message: fmt.Sprintf(
			"Credentials binding %s could not be labelled dirty within %s (%v); the Runtime goes without it and KEB's deprovisioning waits for the shoot. Label it dirty=true by hand if the deletion is genuine.",
			req.CredentialsBinding, deletion.BindingReleaseTimeout, cause)})
		return nil
	}
	siblings := deletion.SiblingsNotRead
	for range 6 {
		b, err := t.Bindings.Get(ctx, req.CredentialsBinding)
		if err != nil {
			return giveUp(fmt.Errorf("read credentials binding %s: %w", req.CredentialsBinding, err))
		}
		d := deletion.OnRelease(b, state, siblings, req.DeletionStarted, now)
		switch d.Step {
		case deletion.BindingListUsers:
			o, err := bindingUsers(ctx, t.Shoots, t.Bindings, t.Records, t.Policy, req.ShootName, b)
			if err != nil {
				return giveUp(err)
			}
			siblings = deletion.NoSiblingLabel
			if o.Holders > 0 {
				siblings = deletion.SiblingLabelHeld
			}
		case deletion.BindingRecordIntent:
			rec.BindingRelease = d.Record
			if err := t.Records.Put(ctx, *rec); err != nil {
				return giveUp(fmt.Errorf("record the release of credentials binding %s: %w", req.CredentialsBinding, err))
			}
			stored := *rec
			*recorded, state = &stored, d.Record
		case deletion.BindingLabelDirty:
			err := t.Bindings.SetDirty(ctx, req.CredentialsBinding, b.ResourceVersion)
			if errors.Is(err, ports.ErrConflict) {
				continue
			}
			if err != nil {
				return giveUp(fmt.Errorf("label credentials binding %s dirty: %w", req.CredentialsBinding, err))
			}
			res.Events = append(res.Events, Event{Reason: EventBindingReleased, Message: d.Message})
		default:
			if d.Record == deletion.BindingNotReleased && state != deletion.BindingNotReleased {
				res.Events = append(res.Events, Event{Warning: true, Reason: EventBindingNotReleased, Message: d.Message})
			}
			rec.BindingRelease = d.Record
			return nil
		}
	}
	return giveUp(fmt.Errorf("label credentials binding %s dirty: %w: it kept changing", req.CredentialsBinding, ports.ErrConflict))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
