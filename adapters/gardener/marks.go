package gardener

import (
	"strconv"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
)

// Labels and annotations the operator records on shoots. They are the evidence that the operator created a shoot
// (wire.LabelManagedBy) and carry its lifecycle and deletion state, so a restarted operator needs no other memory.
const (
	AnnotationRuntimeNamespace = shoot.AnnotationRuntimeNamespace
	AnnotationSpecHash         = "infrastructuremanager.kyma-project.io/spec-hash"
	AnnotationRetryAttempts    = "infrastructuremanager.kyma-project.io/retry-attempts"
	AnnotationRetryGeneration  = "infrastructuremanager.kyma-project.io/retry-shoot-generation"
	AnnotationRetryRequestedAt = "infrastructuremanager.kyma-project.io/retry-requested-at"

	AnnotationDeletionRuntimeID = "infrastructuremanager.kyma-project.io/deletion-runtime-id"
	AnnotationDeletionPlan      = "infrastructuremanager.kyma-project.io/deletion-plan"
	AnnotationDeletionMarkedAt  = "infrastructuremanager.kyma-project.io/deletion-marked-at"
	AnnotationDeletionDueAt     = "infrastructuremanager.kyma-project.io/deletion-due-at"
	// AnnotationDeletionWindow is the grace window fixed when the deletion was recorded (a Go duration).
	AnnotationDeletionWindow = "infrastructuremanager.kyma-project.io/deletion-window"
	// AnnotationDeletionRuntimeNamespace is the KCP namespace of the deleted Runtime (where a restore goes).
	AnnotationDeletionRuntimeNamespace = "infrastructuremanager.kyma-project.io/deletion-runtime-namespace"
	// AnnotationPlan is the broker plan with the longest deletion window the runtime had (shootstate.Marks.Plan).
	AnnotationPlan = "infrastructuremanager.kyma-project.io/plan"
	// AnnotationRestoreSpec holds the deleted Runtime as JSON (contains administrators: see docs/deletion.md).
	AnnotationRestoreSpec = "infrastructuremanager.kyma-project.io/restore-spec"

	// FieldManager is the server-side apply field manager of the operator.
	FieldManager = "kim"
)

// deletionAnnotations are removed when a deletion is cancelled.
var deletionAnnotations = []string{AnnotationDeletionRuntimeID, AnnotationDeletionPlan, AnnotationDeletionMarkedAt,
	AnnotationDeletionDueAt, AnnotationDeletionWindow, AnnotationDeletionRuntimeNamespace, AnnotationRestoreSpec, wire.AnnotationRestore,
	v1beta1constants.ConfirmationDeletion}

// Observer is the shoot observation port of the controllers' garden watches (kymaruntime, registrycache,
// auditlog): it reads the domain's observation of a shoot off an event's object with Observe.
type Observer struct{}

// Observe implements the controllers' ShootObserver.
func (Observer) Observe(s *gardencorev1beta1.Shoot) shootstate.Shoot { return Observe(s) }

// Observe maps a Gardener shoot to the domain's observation of it; nil means "no shoot".
func Observe(s *gardencorev1beta1.Shoot) shootstate.Shoot {
	if s == nil {
		return shootstate.Shoot{}
	}
	a := s.Annotations
	out := shootstate.Shoot{
		Exists: true, Name: s.Name, UID: string(s.UID), ResourceVersion: s.ResourceVersion,
		Generation: s.Generation, ObservedGeneration: s.Status.ObservedGeneration,
		HibernationRequested:   s.Spec.Hibernation != nil && s.Spec.Hibernation.Enabled != nil && *s.Spec.Hibernation.Enabled,
		Hibernated:             s.Status.IsHibernated,
		APIServerAdvertised:    len(s.Status.AdvertisedAddresses) > 0,
		ForceDeletionRequested: a[v1beta1constants.AnnotationConfirmationForceDeletion] == "true",
	}
	if s.Spec.SeedName != nil {
		out.SeedName = *s.Spec.SeedName
	}
	if s.DeletionTimestamp != nil {
		ts := s.DeletionTimestamp.Time
		out.DeletionTimestamp = &ts
	}
	if op := s.Status.LastOperation; op != nil {
		out.LastOperation = &shootstate.Operation{Type: shootstate.OperationType(op.Type), State: shootstate.OperationState(op.State),
			Progress: op.Progress, Description: op.Description, LastUpdate: op.LastUpdateTime.Time}
	}
	for _, e := range s.Status.LastErrors {
		le := shootstate.LastError{Description: e.Description}
		for _, c := range e.Codes {
			le.Codes = append(le.Codes, shootstate.ErrorCode(c))
		}
		out.LastErrors = append(out.LastErrors, le)
	}
	m := &out.Marks
	m.Managed = s.Labels[wire.LabelManagedBy] == wire.ManagedByValue
	m.RuntimeID, _ = translate.RuntimeIDOf(a)
	m.AppliedRuntimeGeneration = atoi(a[shoot.AnnotationRuntimeGeneration])
	m.AppliedSpecHash = a[AnnotationSpecHash]
	m.RetryAttempts = int(atoi(a[AnnotationRetryAttempts]))
	m.RetryShootGeneration = atoi(a[AnnotationRetryGeneration])
	m.RetryRequestedAt = parseTime(a[AnnotationRetryRequestedAt])
	m.Plan = a[AnnotationPlan]
	if id, ok := a[AnnotationDeletionRuntimeID]; ok {
		m.PendingDeletion = observeRecord(id, a)
	}
	return out
}

// observeRecord reads a deletion record. Records of operator versions that did not write the window or the
// namespace get them derived: the window from due and mark time, the namespace from the runtime-namespace mark.
func observeRecord(runtimeID string, a map[string]string) *shootstate.PendingDeletion {
	pd := &shootstate.PendingDeletion{RuntimeID: runtimeID, Plan: a[AnnotationDeletionPlan],
		MarkedAt: parseTime(a[AnnotationDeletionMarkedAt]), DueAt: parseTime(a[AnnotationDeletionDueAt]),
		RuntimeNamespace: a[AnnotationDeletionRuntimeNamespace], RestoreRequested: a[wire.AnnotationRestore] == "true"}
	if pd.RuntimeNamespace == "" {
		pd.RuntimeNamespace = a[AnnotationRuntimeNamespace]
	}
	if w, ok := a[AnnotationDeletionWindow]; ok {
		d, err := time.ParseDuration(w)
		if err != nil {
			d = -1 // unreadable: the record is not trusted (deletion.CheckRecord)
		}
		pd.Window = d
	} else if !pd.MarkedAt.IsZero() && !pd.DueAt.IsZero() {
		pd.Window = max(pd.DueAt.Sub(pd.MarkedAt), 0)
	}
	return pd
}

func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
