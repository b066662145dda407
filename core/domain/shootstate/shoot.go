package shootstate

import (
	"fmt"
	"strings"
	"time"
)

// OperationType is the kind of Gardener's last operation on a shoot.
type OperationType string

// Operation types Gardener reports.
const (
	OperationCreate    OperationType = "Create"
	OperationReconcile OperationType = "Reconcile"
	OperationDelete    OperationType = "Delete"
	OperationMigrate   OperationType = "Migrate"
	OperationRestore   OperationType = "Restore"
)

// OperationState is the state of Gardener's last operation on a shoot.
type OperationState string

// Operation states Gardener reports. Error means Gardener itself retries; Failed means it gave up.
const (
	StateProcessing OperationState = "Processing"
	StateSucceeded  OperationState = "Succeeded"
	StateError      OperationState = "Error"
	StateFailed     OperationState = "Failed"
	StatePending    OperationState = "Pending"
	StateAborted    OperationState = "Aborted"
)

// Operation is Gardener's last operation on a shoot.
type Operation struct {
	Type        OperationType
	State       OperationState
	Progress    int32
	Description string
	// LastUpdate is when Gardener last changed the operation; retries are scheduled relative to it.
	LastUpdate time.Time
}

// LastError is one error Gardener reports for a shoot, with its machine-readable codes.
type LastError struct {
	Description string
	Codes       []ErrorCode
}

// Shoot is what the operator observed of one shoot. The zero value means "no shoot".
type Shoot struct {
	Exists bool
	Name   string
	// UID and ResourceVersion identify the observed object and its version; destructive writes carry them as
	// preconditions so they cannot hit a re-created shoot or act on a state that changed since it was observed.
	UID             string
	ResourceVersion string
	// Live is true when the shoot was read from the API server itself, not from a cache that may lag behind.
	// Irreversible decisions are only taken on live observations.
	Live bool
	// Generation and ObservedGeneration tell whether Gardener has seen the latest spec.
	Generation         int64
	ObservedGeneration int64
	LastOperation      *Operation
	LastErrors         []LastError
	// HibernationRequested is spec.hibernation.enabled; Hibernated is status.isHibernated.
	HibernationRequested bool
	Hibernated           bool
	// APIServerAdvertised is true once Gardener advertises the shoot's kube-apiserver (status.advertisedAddresses),
	// which happens during the Create operation, well before it succeeds: from then on Gardener issues kubeconfigs.
	APIServerAdvertised bool
	// SeedName is the seed Gardener scheduled the control plane to; empty until then.
	SeedName string
	// DeletionTimestamp is set once the shoot is being deleted.
	DeletionTimestamp *time.Time
	// ForceDeletionRequested is true when confirmation.gardener.cloud/force-deletion is set.
	ForceDeletionRequested bool
	Marks                  Marks
}

// Marks are what the operator itself recorded on a shoot (labels and annotations). They are the only evidence that
// the operator created a shoot: a shoot without Managed is never changed or deleted.
type Marks struct {
	// Managed is true when the shoot carries the operator's managed-by label.
	Managed bool
	// RuntimeID is the runtime the shoot belongs to.
	RuntimeID string
	// AppliedRuntimeGeneration is the Runtime generation whose spec was last applied.
	AppliedRuntimeGeneration int64
	// AppliedSpecHash identifies the desired spec last applied (covers operator configuration changes).
	AppliedSpecHash string
	// RetryAttempts counts retries the operator requested for RetryShootGeneration.
	RetryAttempts        int
	RetryShootGeneration int64
	// RetryRequestedAt is when the operator last asked Gardener to retry.
	RetryRequestedAt time.Time
	// PendingDeletion is set while the shoot waits in its deletion grace window.
	PendingDeletion *PendingDeletion
	// Plan is the broker plan recorded on the shoot when it was created (or the plan with the longest window
	// since). A relabelled Runtime cannot shorten its window below this plan's.
	Plan string
}

// PendingDeletion is the record the operator leaves on a shoot whose Runtime was deleted.
type PendingDeletion struct {
	// RuntimeID and Plan identify the deleted Runtime.
	RuntimeID string
	Plan      string
	// MarkedAt is when the Runtime was deleted; DueAt when the shoot may be deleted.
	MarkedAt time.Time
	DueAt    time.Time
	// Window is the grace window fixed when the deletion was recorded (DueAt - MarkedAt for records of older
	// operator versions, which did not write it).
	Window time.Duration
	// RuntimeNamespace is the KCP namespace of the deleted Runtime: a restore goes back there and nowhere else.
	RuntimeNamespace string
	// RestoreRequested is set by a person (annotation on the shoot) to bring the Runtime back.
	RestoreRequested bool
}

// Deleting reports whether Gardener is deleting the shoot.
func (s Shoot) Deleting() bool { return s.Exists && s.DeletionTimestamp != nil }

// OwnedBy reports whether the operator created the shoot for runtimeID.
func (s Shoot) OwnedBy(runtimeID string) bool {
	return s.Exists && s.Marks.Managed && s.Marks.RuntimeID == runtimeID
}

// Reconciled reports whether Gardener finished reconciling the latest spec successfully.
func (s Shoot) Reconciled() bool {
	if !s.Exists || s.LastOperation == nil || s.ObservedGeneration < s.Generation {
		return false
	}
	op := s.LastOperation
	return op.State == StateSucceeded && op.Type != OperationDelete
}

// EverSucceeded reports whether the shoot was created successfully at some point: a last operation other than
// Create means the Create operation finished.
func (s Shoot) EverSucceeded() bool {
	if !s.Exists || s.LastOperation == nil {
		return false
	}
	if s.LastOperation.Type == OperationCreate {
		return s.LastOperation.State == StateSucceeded
	}
	return true
}

// ReconciledAt returns when Gardener last finished an operation on the shoot successfully, as far as the last
// operation tells (false while an operation runs or after a failure: Gardener keeps only the last one).
func (s Shoot) ReconciledAt() (time.Time, bool) {
	if !s.Exists || s.LastOperation == nil || s.LastOperation.State != StateSucceeded || s.LastOperation.Type == OperationDelete {
		return time.Time{}, false
	}
	return s.LastOperation.LastUpdate, true
}

// Failed reports whether Gardener gave up on the last operation.
func (s Shoot) Failed() bool {
	return s.Exists && s.LastOperation != nil && s.LastOperation.State == StateFailed
}

// Codes returns the distinct error codes of all last errors, in order of first appearance.
func (s Shoot) Codes() []ErrorCode {
	var out []ErrorCode
	seen := map[ErrorCode]bool{}
	for _, e := range s.LastErrors {
		for _, c := range e.Codes {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// GardenerMessage summarises the last operation and errors for a person: what Gardener said, with codes.
func (s Shoot) GardenerMessage() string {
	var parts []string
	if op := s.LastOperation; op != nil {
		msg := fmt.Sprintf("Gardener %s %s (%d%%)", op.Type, op.State, op.Progress)
		if op.Description != "" {
			msg += ": " + op.Description
		}
		parts = append(parts, msg)
	}
	for _, e := range s.LastErrors {
		d := e.Description
		if len(e.Codes) > 0 {
			codes := make([]string, len(e.Codes))
			for i, c := range e.Codes {
				codes[i] = string(c)
			}
			d = "[" + strings.Join(codes, ",") + "] " + d
		}
		parts = append(parts, d)
	}
	if len(parts) == 0 {
		return "Gardener has not reported on the shoot yet"
	}
	return strings.Join(parts, "; ")
}
