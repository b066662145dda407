package usecase

import (
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// Event is something that happened and is worth telling people about; the controllers' skeleton records the use
// cases' events as they are.
type Event = ports.Event

// Event reasons of the use cases.
const (
	EventShootApplied          = "ShootApplied"
	EventShootAdopted          = "ShootAdopted"
	EventClusterRestored       = "ClusterRestored"
	EventShootMarked           = "ShootMarkedForDeletion"
	EventShootDeleted          = "ShootDeleted"
	EventShootForceDeleted     = "ShootForceDeleted"
	EventRestoreStarted        = "RestoreStarted"
	EventDeletionStopped       = "DeletionStopped"
	EventBreakerTripped        = "DeletionCircuitBreakerTripped"
	EventInvalidDeletionRecord = "InvalidDeletionRecord"
	// EventBrakeInvalid: the emergency brake holds a value other than "true" or "false"; deletions stay stopped.
	EventBrakeInvalid = "DeletionBrakeInvalid"
	// EventNoKCPRecord and EventKCPRecordMismatch: a shoot's deletion record is not backed by the KCP's record
	// (deletion.ReasonNoKCPRecord, deletion.ReasonKCPRecordMismatch); the shoot is never reaped so.
	EventNoKCPRecord            = deletion.ReasonNoKCPRecord
	EventKCPRecordMismatch      = deletion.ReasonKCPRecordMismatch
	EventRestoreDocumentDropped = "RestoreDocumentTooLarge"
	// EventBootstrapPullSecretRefused and EventBootstrapObjectRefused (warnings) report a configuration attempt that
	// refused the landscape's bootstrap set (runtimeconfig's reasons of the same names): nothing of it was applied.
	EventBootstrapPullSecretRefused = "BootstrapPullSecretRefused"
	EventBootstrapObjectRefused     = "BootstrapObjectRefused"
	// EventBindingReleased: the credentials binding of a deleted runtime was labelled dirty (KEB's deprovisioning
	// finishes at once); EventBindingRestored: that label came off again with a restore or because another shoot
	// uses the binding; EventBindingNotReleased (warning): labelling failed for deletion.BindingReleaseTimeout
	// and the Runtime went without it, so KEB's deprovisioning waits for the shoot and fails after an hour.
	EventBindingReleased    = "CredentialsBindingReleased"
	EventBindingRestored    = "CredentialsBindingDirtyRemoved"
	EventBindingNotReleased = "CredentialsBindingNotReleased"
)
