package lifecycle

// State is the coarse state KEB follows (status.state).
type State string

// States KEB understands.
const (
	StatePending     State = "Pending"
	StateReady       State = "Ready"
	StateFailed      State = "Failed"
	StateTerminating State = "Terminating"
)

// Reason is the stable reason of the Ready condition. Values never change meaning: people and alerts match on them.
type Reason string

// Ready condition reasons, one per situation a person may need to tell apart.
const (
	ReasonSpecInvalid Reason = "SpecInvalid"
	// ReasonAuditLogPoolEmpty: auditLogAccessEnabled asks for a tenant of the runtime's own and the pool has no
	// free one; the runtime waits (nothing is created or changed) until the landscape adds tenants.
	ReasonAuditLogPoolEmpty Reason = "AuditLogPoolEmpty"
	// ReasonAuditLogTenantInvalid: the runtime holds a dedicated audit log tenant whose service URL or write
	// credentials Secret a shoot must not get (auditlog.Tenant.ConfigProblem); the runtime waits (the shoot keeps
	// what it has, nothing is changed) until the audit log manager corrects the tenant.
	ReasonAuditLogTenantInvalid Reason = "AuditLogTenantInvalid"
	// ReasonClaimingAuditLog: a tenant is being claimed (other claimers raced for the same ones); it is retried.
	ReasonClaimingAuditLog          Reason = "ClaimingAuditLog"
	ReasonSeedNotAvailable          Reason = "SeedNotAvailable"
	ReasonCheckingSeed              Reason = "CheckingSeed"
	ReasonShootNameTaken            Reason = "ShootNameTaken"
	ReasonOldClusterPendingDeletion Reason = "OldClusterPendingDeletion"
	ReasonOldClusterDeleting        Reason = "OldClusterDeleting"
	ReasonDeletionsFrozen           Reason = "DeletionsFrozen"
	ReasonRestoringCluster          Reason = "RestoringCluster"
	ReasonShootBeingDeleted         Reason = "ShootBeingDeleted"
	ReasonAdoptingShoot             Reason = "AdoptingShoot"
	ReasonCreatingShoot             Reason = "CreatingShoot"
	ReasonUpdatingShoot             Reason = "UpdatingShoot"
	ReasonPatchSuspended            Reason = "PatchReconciliationSuspended"
	ReasonShootRejected             Reason = "ShootRejected"
	// ReasonAuditLogSecretMissing: the audit log credentials Secret the runtime's tenant names does not exist in the
	// Gardener project, so the garden refuses the shoot; the runtime waits (nothing else is written) and is tried
	// again until the landscape creates the Secret. Not the Runtime's fault, so never Failed.
	ReasonAuditLogSecretMissing   Reason = "AuditLogSecretMissing"
	ReasonGardenerUnavailable     Reason = "GardenerUnavailable"
	ReasonWaitingForGardener      Reason = "WaitingForGardener"
	ReasonGardenerRetryScheduled  Reason = "GardenerRetryScheduled"
	ReasonGardenerFailed          Reason = "GardenerFailed"
	ReasonCreatingGardenerCluster Reason = "CreatingGardenerCluster"
	ReasonWaitingForKubeconfig    Reason = "WaitingForKubeconfig"
	ReasonConfiguringRuntime      Reason = "ConfiguringRuntime"
	ReasonRuntimeConfigFailed     Reason = "RuntimeConfigurationFailed"
	// ReasonRuntimeAPIServerUnreachable: the runtime's API server did not answer within the timeout.
	ReasonRuntimeAPIServerUnreachable Reason = "RuntimeAPIServerUnreachable"
	// ReasonBootstrapInProgress: the landscape's bootstrap manifests are applied, their Deployments not available yet.
	ReasonBootstrapInProgress Reason = "BootstrapInProgress"
	ReasonReady               Reason = "Ready"
)

// Step names where in the provisioning flow a Runtime is. Steps run in this order; a step is skipped when its
// outcome is already observed.
type Step string

// The named steps of provisioning.
const (
	StepValidate              Step = "Validate"
	StepClaimAuditLog         Step = "ClaimAuditLog"
	StepResolveShootName      Step = "ResolveShootName"
	StepCheckSeed             Step = "CheckSeed"
	StepApplyShoot            Step = "ApplyShoot"
	StepWaitForGardener       Step = "WaitForGardener"
	StepEnsureGardenerCluster Step = "EnsureGardenerCluster"
	StepWaitForKubeconfig     Step = "WaitForKubeconfig"
	StepConfigureRuntime      Step = "ConfigureRuntime"
	StepReady                 Step = "Ready"
)

// Steps lists the provisioning steps in order.
func Steps() []Step {
	return []Step{StepValidate, StepClaimAuditLog, StepResolveShootName, StepCheckSeed, StepApplyShoot, StepWaitForGardener,
		StepEnsureGardenerCluster, StepWaitForKubeconfig, StepConfigureRuntime, StepReady}
}

// Action is the one side effect a decision asks for.
type Action string

// Actions a controller performs; ActionNone means wait (for a watch event or RequeueAfter).
const (
	ActionNone Action = ""
	// ActionCheckSeed asks whether a usable seed exists in the runtime's region (read only).
	ActionCheckSeed Action = "CheckSeed"
	// ActionApplyShoot creates or updates the shoot with the desired spec and records the applied generation.
	ActionApplyShoot Action = "ApplyShoot"
	// ActionRetryShoot asks Gardener to retry the failed operation (gardener.cloud/operation=retry).
	ActionRetryShoot Action = "RetryShoot"
	// ActionRestoreCluster cancels the pending deletion of the cluster of this very runtime (same runtime ID) and
	// wakes it up.
	ActionRestoreCluster Action = "RestoreCluster"
	// ActionAdoptShoot takes over a shoot the system the operator replaces created for this runtime.
	ActionAdoptShoot Action = "AdoptShoot"
	// ActionEnsureGardenerCluster creates or updates the GardenerCluster named by the runtime ID.
	ActionEnsureGardenerCluster Action = "EnsureGardenerCluster"
	// ActionConfigureRuntime makes the inside of the runtime match the desired configuration (core/domain/runtimeconfig):
	// kyma-system, the provisioning info ConfigMap, the customer's OpenIDConnect resources, the administrators'
	// bindings and the optional bootstrap manifests.
	ActionConfigureRuntime Action = "ConfigureRuntime"
)

// ReasonAdoptionReviewRequired: the first apply to a shoot adopted from the previous manager would change it, and the
// adopt-only mode holds it until a person approves it (docs/operations/migration.md).
const ReasonAdoptionReviewRequired Reason = "AdoptionReviewRequired"
