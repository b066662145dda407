package gardenlet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// finalizer is the finalizer the real gardenlet puts on shoots.
	finalizer = "gardener"
	// annotationOperation is Gardener's operation annotation (reconcile, retry).
	annotationOperation = "gardener.cloud/operation"
)

// Reconcile advances the simulated operation of one shoot by one step. Status writes are pinned to the version read:
// a write decided on a shoot read from a cache that missed the last write conflicts and is decided again on the next
// read, so a finished operation is never reported as running again.
func (g *Gardenlet) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g.held.RLock()
	defer g.held.RUnlock()
	res, err := g.reconcile(ctx, req)
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// conflictRetry is how soon a status write that conflicted is decided again (the cache is usually behind by
// milliseconds).
const conflictRetry = 50 * time.Millisecond

func (g *Gardenlet) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := g.log.WithValues("shoot", req.String())
	shoot := &gardencorev1beta1.Shoot{}
	if err := g.client.Get(ctx, req.NamespacedName, shoot); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get shoot %s: %w", req, err)
	}
	if shoot.DeletionTimestamp != nil {
		g.recordDeletion(shoot, time.Now())
		if !controllerutil.ContainsFinalizer(shoot, finalizer) {
			return ctrl.Result{}, nil
		}
		return g.step(ctx, log, shoot, gardencorev1beta1.LastOperationTypeDelete)
	}
	if !controllerutil.ContainsFinalizer(shoot, finalizer) {
		patch := client.MergeFrom(shoot.DeepCopy())
		controllerutil.AddFinalizer(shoot, finalizer)
		if err := g.client.Patch(ctx, shoot, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to shoot %s: %w", req, err)
		}
	}
	if shoot.Spec.SeedName == nil {
		// A gardenlet only works on shoots scheduled to its seed: an unbound shoot waits for the binding (a
		// conflict with a concurrent write is retried).
		if err := g.bind(ctx, shoot); apierrors.IsConflict(err) {
			g.log.V(1).Info("shoot not scheduled yet", "shoot", req.String(), "reason", err.Error())
			return ctrl.Result{RequeueAfter: time.Second}, nil
		} else if err != nil {
			// No seed the catalogue offers fits (e.g. access restrictions): simulate the cluster anyway.
			g.log.V(1).Info("shoot not scheduled", "shoot", req.String(), "reason", err.Error())
		}
	}
	op, ok, err := g.pendingOperation(ctx, shoot)
	if err != nil || !ok {
		return ctrl.Result{}, err
	}
	return g.step(ctx, log, shoot, op)
}

// pendingOperation decides which operation the shoot needs, if any.
func (g *Gardenlet) pendingOperation(ctx context.Context, shoot *gardencorev1beta1.Shoot) (gardencorev1beta1.LastOperationType, bool, error) {
	last := shoot.Status.LastOperation
	if last == nil || (last.Type == gardencorev1beta1.LastOperationTypeCreate && last.State != gardencorev1beta1.LastOperationStateSucceeded) {
		return gardencorev1beta1.LastOperationTypeCreate, true, nil
	}
	if v := shoot.Annotations[annotationOperation]; v == "reconcile" || v == "retry" {
		// Like Gardener, consume the annotation and start a fresh reconciliation.
		patch := client.MergeFrom(shoot.DeepCopy())
		delete(shoot.Annotations, annotationOperation)
		if err := g.client.Patch(ctx, shoot, patch); err != nil {
			return "", false, fmt.Errorf("remove operation annotation of shoot %s: %w", shoot.Name, err)
		}
		g.forget(shoot)
		return gardencorev1beta1.LastOperationTypeReconcile, true, nil
	}
	if shoot.Generation != shoot.Status.ObservedGeneration || last.State != gardencorev1beta1.LastOperationStateSucceeded {
		return gardencorev1beta1.LastOperationTypeReconcile, true, nil
	}
	return "", false, nil
}

// step moves operation op forward: Processing with rising progress until its duration has passed, then
// Succeeded (or Failed/Error when a fault is configured).
func (g *Gardenlet) step(ctx context.Context, log interface{ Info(string, ...any) }, shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType) (ctrl.Result, error) {
	last := shoot.Status.LastOperation
	flt := g.faultFor(shoot, op)
	if last != nil && last.Type == op && isFinalFailure(last.State) && shoot.Status.ObservedGeneration == shoot.Generation && !flt.none() {
		return ctrl.Result{}, nil // failed and the fault still applies: stay failed until something changes
	}

	if op != gardencorev1beta1.LastOperationTypeDelete && (shoot.Status.LastOperation == nil || shoot.Status.LastOperation.Type != op ||
		shoot.Status.LastOperation.State != gardencorev1beta1.LastOperationStateProcessing) {
		// Report Processing before the (possibly slow) runtime API server start.
		desc := processingDescription(shoot, op)
		if serve := !strings.EqualFold(shoot.Annotations[AnnotationNoRuntimeAPIServer], "true"); !g.runtime.Running(shoot.Namespace+"/"+shoot.Name, serve) {
			// The start of its runtime API server is queued behind others: on a busy machine that is minutes, and a
			// test waiting for the shoot then says why.
			desc += fmt.Sprintf("; waiting for its runtime API server to start (%d starts queued or running)", g.runtime.Starts()+1)
		}
		if err := g.setLastOperation(ctx, shoot, op, gardencorev1beta1.LastOperationStateProcessing, 0, desc, nil); err != nil {
			return ctrl.Result{}, err
		}
	}
	if op != gardencorev1beta1.LastOperationTypeDelete {
		if err := g.ensureEndpoint(ctx, shoot); err != nil {
			// Said in the operation, as a waiting test or person reads it; the start is retried with the error.
			desc := fmt.Sprintf("%s; its runtime API server did not start, retrying: %v", processingDescription(shoot, op), err)
			if werr := g.setLastOperation(ctx, shoot, op, gardencorev1beta1.LastOperationStateProcessing, 0, desc, nil); werr != nil {
				err = errors.Join(err, werr)
			}
			return ctrl.Result{}, err
		}
	}
	// The clock starts once the endpoint is there: a runtime API server may take seconds to start.
	rec, fresh := g.track(shoot, op, time.Now())
	res, err := g.advance(ctx, log, shoot, op, rec)
	if fresh && apierrors.IsConflict(err) {
		// Started on a stale read (typically of an operation that has just finished): nothing of it was written.
		g.forget(shoot)
	}
	return res, err
}

// advance writes the progress of operation op, or its end once its duration has passed. The operation is forgotten
// only once its end is written: a retry of a failed final write finishes the same operation instead of starting it
// again from 5 %.
func (g *Gardenlet) advance(ctx context.Context, log interface{ Info(string, ...any) }, shoot *gardencorev1beta1.Shoot,
	op gardencorev1beta1.LastOperationType, rec operation) (ctrl.Result, error) {
	flt := g.faultFor(shoot, op)
	now := time.Now()
	elapsed := now.Sub(rec.started)
	duration := g.duration(shoot, op)
	stuck := op == gardencorev1beta1.LastOperationTypeDelete && g.stuckDeletion(shoot)
	if elapsed < duration || stuck {
		progress := int32(0)
		if duration > 0 {
			progress = int32(min(95, 5+90*elapsed/duration))
		}
		desc := processingDescription(shoot, op)
		if stuck {
			progress, desc = 10, "Deletion is stuck (simulated): waiting for resources in the cluster to be cleaned up"
		}
		if err := g.setLastOperation(ctx, shoot, op, gardencorev1beta1.LastOperationStateProcessing, progress, desc, nil); err != nil {
			return ctrl.Result{}, err
		}
		if stuck {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: min(g.opts.ProgressInterval, duration-elapsed)}, nil
	}
	if !flt.none() {
		lastErr := gardencorev1beta1.LastError{Description: flt.description(op), Codes: flt.codes, LastUpdateTime: &metav1.Time{Time: now}}
		state := gardencorev1beta1.LastOperationStateError
		if v1beta1helper.HasNonRetryableErrorCode(lastErr) {
			state = gardencorev1beta1.LastOperationStateFailed
		}
		log.Info("simulated failure", "operation", op, "codes", flt.codes)
		return ctrl.Result{}, g.ended(shoot, g.setLastOperation(ctx, shoot, op, state, rec.progressAtFailure(), flt.description(op),
			[]gardencorev1beta1.LastError{lastErr}))
	}
	if op == gardencorev1beta1.LastOperationTypeDelete {
		return ctrl.Result{}, g.ended(shoot, g.finishDeletion(ctx, shoot))
	}
	log.Info("operation succeeded", "operation", op)
	return ctrl.Result{}, g.ended(shoot, g.setSucceeded(ctx, shoot, op))
}

// ended forgets the shoot's operation once the write of its end (err) succeeded.
func (g *Gardenlet) ended(shoot *gardencorev1beta1.Shoot, err error) error {
	if err == nil {
		g.forget(shoot)
	}
	return err
}

func isFinalFailure(s gardencorev1beta1.LastOperationState) bool {
	return s == gardencorev1beta1.LastOperationStateFailed || s == gardencorev1beta1.LastOperationStateError
}

func (o operation) progressAtFailure() int32 { return 50 }

func processingDescription(shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType) string {
	hibernate := shoot.Spec.Hibernation != nil && ptr.Deref(shoot.Spec.Hibernation.Enabled, false)
	switch {
	case op == gardencorev1beta1.LastOperationTypeCreate:
		return "Creating infrastructure, control plane and worker nodes (simulated)"
	case op == gardencorev1beta1.LastOperationTypeDelete:
		return "Deleting worker nodes, control plane and infrastructure (simulated)"
	case hibernate && !shoot.Status.IsHibernated:
		return "Hibernating cluster (simulated)"
	case !hibernate && shoot.Status.IsHibernated:
		return "Waking up cluster (simulated)"
	}
	return "Reconciling shoot cluster (simulated)"
}

// track returns the in-memory record of the shoot's current operation, starting a new one (fresh) when the
// operation type or the generation changed.
func (g *Gardenlet) track(shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType, now time.Time) (rec operation, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rec, ok := g.ops[shoot.UID]
	if !ok || rec.kind != op || (op == gardencorev1beta1.LastOperationTypeReconcile && rec.generation != shoot.Generation) {
		rec = operation{kind: op, generation: shoot.Generation, started: now}
		g.ops[shoot.UID] = rec
		return rec, true
	}
	return rec, false
}

func (g *Gardenlet) forget(shoot *gardencorev1beta1.Shoot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.ops, shoot.UID)
}

func (g *Gardenlet) setLastOperation(ctx context.Context, shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType,
	state gardencorev1beta1.LastOperationState, progress int32, desc string, lastErrors []gardencorev1beta1.LastError) error {
	if l := shoot.Status.LastOperation; l != nil && l.Type == op && l.State == state && l.Progress == progress && l.Description == desc &&
		shoot.Status.ObservedGeneration == shoot.Generation {
		return nil
	}
	patch := client.MergeFromWithOptions(shoot.DeepCopy(), client.MergeFromWithOptimisticLock{})
	shoot.Status.LastOperation = &gardencorev1beta1.LastOperation{
		Type: op, State: state, Progress: progress, Description: desc, LastUpdateTime: metav1.Now(),
	}
	shoot.Status.LastErrors = lastErrors
	// Like the gardenlet, record at the start of an operation which generation it works on.
	shoot.Status.ObservedGeneration = shoot.Generation
	if err := g.client.Status().Patch(ctx, shoot, patch); err != nil {
		return fmt.Errorf("patch status of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return nil
}

func (g *Gardenlet) setSucceeded(ctx context.Context, shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType) error {
	patch := client.MergeFromWithOptions(shoot.DeepCopy(), client.MergeFromWithOptimisticLock{})
	now := metav1.Now()
	project := strings.TrimPrefix(shoot.Namespace, "garden-")
	st := &shoot.Status
	st.LastOperation = &gardencorev1beta1.LastOperation{
		Type: op, State: gardencorev1beta1.LastOperationStateSucceeded, Progress: 100, LastUpdateTime: now,
		Description: "Shoot cluster has been successfully reconciled.",
	}
	if op == gardencorev1beta1.LastOperationTypeCreate {
		st.LastOperation.Description = "Shoot cluster has been successfully created."
	}
	st.LastErrors = nil
	st.ObservedGeneration = shoot.Generation
	st.IsHibernated = shoot.Spec.Hibernation != nil && ptr.Deref(shoot.Spec.Hibernation.Enabled, false)
	st.TechnicalID = fmt.Sprintf("shoot--%s--%s", project, shoot.Name)
	st.UID = shoot.UID
	st.SeedName = shoot.Spec.SeedName
	st.Gardener = gardencorev1beta1.Gardener{ID: "sandbox-gardenlet", Name: "sandbox-gardenlet", Version: "v1.149.3"}
	st.Conditions = conditions(now, st.IsHibernated)
	if err := g.client.Status().Patch(ctx, shoot, patch); err != nil {
		return fmt.Errorf("patch status of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return nil
}

func conditions(now metav1.Time, hibernated bool) []gardencorev1beta1.Condition {
	status, reason := gardencorev1beta1.ConditionTrue, "Simulated"
	if hibernated {
		reason = "Hibernated"
	}
	var out []gardencorev1beta1.Condition
	for _, t := range []gardencorev1beta1.ConditionType{
		gardencorev1beta1.ShootAPIServerAvailable, gardencorev1beta1.ShootControlPlaneHealthy,
		gardencorev1beta1.ShootObservabilityComponentsHealthy, gardencorev1beta1.ShootEveryNodeReady,
		gardencorev1beta1.ShootSystemComponentsHealthy,
	} {
		out = append(out, gardencorev1beta1.Condition{Type: t, Status: status, Reason: reason,
			Message: "simulated by the sandbox gardenlet", LastTransitionTime: now, LastUpdateTime: now})
	}
	return out
}

func (g *Gardenlet) finishDeletion(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	key := shoot.Namespace + "/" + shoot.Name
	if err := g.runtime.Release(key); err != nil {
		g.log.Info("stopping runtime API server failed", "shoot", key, "error", err.Error())
	}
	if err := g.deleteCAObjects(ctx, shoot); err != nil {
		return err
	}
	// The gardener-apiserver lets the finalizer go only after a successful Delete operation.
	if err := g.setLastOperation(ctx, shoot, gardencorev1beta1.LastOperationTypeDelete, gardencorev1beta1.LastOperationStateSucceeded,
		100, "Shoot cluster has been successfully deleted.", nil); err != nil {
		return err
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	controllerutil.RemoveFinalizer(shoot, finalizer)
	if err := g.client.Patch(ctx, shoot, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of shoot %s: %w", key, err)
	}
	g.log.Info("shoot deleted", "shoot", key)
	return nil
}
