package usecase

// Event is something that happened and is worth telling people about (the controller records it on the custom
// resource). Reasons are stable: people and alerts match on them.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Event reasons of the use cases.
const (
	EventShootApplied           = "ShootApplied"
	EventShootAdopted           = "ShootAdopted"
	EventClusterRestored        = "ClusterRestored"
	EventShootMarked            = "ShootMarkedForDeletion"
	EventShootDeleted           = "ShootDeleted"
	EventShootForceDeleted      = "ShootForceDeleted"
	EventRestoreStarted         = "RestoreStarted"
	EventDeletionStopped        = "DeletionStopped"
	EventBreakerTripped         = "DeletionCircuitBreakerTripped"
	EventInvalidDeletionRecord  = "InvalidDeletionRecord"
	EventRestoreDocumentDropped = "RestoreDocumentTooLarge"
	// EventBootstrapPullSecretRefused and EventBootstrapObjectRefused (warnings) report a configuration attempt that
	// refused the landscape's bootstrap set (runtimeconfig's reasons of the same names): nothing of it was applied.
	EventBootstrapPullSecretRefused = "BootstrapPullSecretRefused"
	EventBootstrapObjectRefused     = "BootstrapObjectRefused"
)
