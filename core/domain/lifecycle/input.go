package lifecycle

import (
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

// Intent is what KEB asked for, reduced to what the state machine decides on.
type Intent struct {
	RuntimeID  string
	Generation int64
	ShootName  string
	Region     string
	// EnforceSeedLocation requires a seed in Region before the shoot is created.
	EnforceSeedLocation bool
	// SuspendPatch (annotation suspend-patch-reconciliation) stops applying spec changes to an existing shoot.
	SuspendPatch bool
	// ForcePatch (annotation force-patch-reconciliation) re-applies the spec once even if nothing changed, also
	// while patching is suspended.
	ForcePatch bool
	// Invalid is set when validating the Runtime or generating its shoot spec failed.
	Invalid *Problem
	// DesiredSpecHash identifies the generated shoot spec; a different hash on the shoot means re-apply.
	DesiredSpecHash string
	// ShootInSync is true when the existing shoot already holds every value the desired spec sets; false means
	// someone else changed a field the operator owns (drift), or the spec was never applied.
	ShootInSync bool
	// Wait is set while something the spec depends on is not there yet (a dedicated audit log tenant): nothing is
	// created or changed until it is.
	Wait *Wait
	// DedicatedAuditLog names the dedicated audit log tenant the spec configures ("" when none); AuditLogAccess is
	// the Runtime's auditLogAccessEnabled. RegistryCaches is the number of registry caches the Runtime asks for.
	// They only feed the conditions the previous infrastructure manager reported.
	DedicatedAuditLog string
	AuditLogAccess    bool
	RegistryCaches    int
	// BoundAdministrators is the number of administrators bound to cluster-admin; ReservedAdministrators the names
	// that get no binding (runtimeconfig.ReservedAdministrators). They give a reached configuration the words a
	// configuring pass reports.
	BoundAdministrators    int
	ReservedAdministrators []string
	// AdoptionHold is set, with the words of the refusal, when the first apply to a shoot adopted from the previous
	// manager would change it and the adopt-only mode holds it for review (HeldForReview). While the Runtime
	// generation the shoot runs is the current one, the shoot is what KEB asked for: the Runtime is decided as if
	// it were in sync, and the hold is reported in a condition instead of the state.
	AdoptionHold string
	// AuditLogKept is set, with its reason in words, when the cluster keeps an audit log the landscape's
	// configuration no longer provides (no tenant for its region): reported in the condition ConditionAuditLogKept.
	AuditLogKept string
}

// Wait says what the Runtime waits for before its shoot can be created or changed.
type Wait struct {
	Step    Step
	Reason  Reason
	Message string
	// Recheck is when to look again without an event (0: wait for one).
	Recheck time.Duration
}

// Problem is a validation failure in words a person can act on.
type Problem struct {
	Field   string
	Message string
	// Reason is the validation's reason (shoot's Reason* names); empty for other failures.
	Reason string
}

// Access is what the operator observed of access to the runtime.
type Access struct {
	// GardenerClusterInSync is true when the GardenerCluster named by the runtime ID exists with the expected spec.
	GardenerClusterInSync bool
	// SecretExists is true when the kubeconfig Secret exists and is filled, with a recorded expiry after now.
	SecretExists bool
	// SecretUnrecorded is true when the kubeconfig Secret is filled but records no expiry: the previous
	// infrastructure manager's, until the GardenerCluster controller replaces it.
	SecretUnrecorded bool
	// Configuration is what the operator knows of its configuration inside the runtime.
	Configuration Configuration
}

// Configuration is the state of the configuration inside the runtime (core/domain/runtimeconfig): what is desired
// and what was last reached. It is written only when the desired state changed or a drift period passed since it
// was last reached (nothing watches inside 5,000 runtimes: re-asserting periodically corrects changes made by hand).
type Configuration struct {
	// DesiredHash identifies the desired state; empty when it is not known (the shoot does not exist yet).
	DesiredHash string
	// AppliedHash identifies the state last reached inside the runtime, at AppliedAt (empty, zero: never).
	AppliedHash string
	AppliedAt   time.Time
	// Bootstrap is true when the landscape configures bootstrap manifests (a Bootstrapped condition is reported).
	Bootstrap bool
	// BootstrapHold is set while the rollout of a changed set does not admit the runtime: the outcome its
	// Bootstrapped condition reports on every pass, configuring or not (runtimeconfig.Rollout.Hold).
	BootstrapHold *runtimeconfig.Outcome
	// OnlyReconcileTimeDiffers is true when the desired state differs from the one reached only in the shoot's last
	// reconcile time (the provisioning info's lastReconcileTime, which every Gardener success changes). Nothing
	// reads that key fresh (docs/runtime-configuration.md), so it alone makes no configuration due: the next pass
	// for any other reason, at the latest the drift period's, writes it.
	OnlyReconcileTimeDiffers bool
}

// Input is everything Decide looks at.
type Input struct {
	Intent Intent
	Shoot  shootstate.Shoot
	Access Access
	// SeedAvailable is nil until checked (only needed with EnforceSeedLocation).
	SeedAvailable *bool
	// DeletionsFrozen is true while the deletion guard stops deletions (brake, breaker, clock): a Runtime waiting
	// for an old cluster says so.
	DeletionsFrozen bool
	// DeletionPolicy tells when an old cluster holding the shoot name is due.
	DeletionPolicy deletion.Policy
	// Backoff spaces retries of failed shoots; zero means cluster.DefaultBackoff.
	Backoff shootstate.Backoff
	// MaxUnknownRetries bounds retries of failures without error codes; zero means DefaultMaxUnknownRetries.
	MaxUnknownRetries int
	// DriftPeriod is how long a reached configuration inside the runtime is trusted before it is written again;
	// zero means DefaultDriftPeriod.
	DriftPeriod time.Duration
	// ReportedReady is true when the Runtime's status.state says Ready, whoever wrote it (this operator or the
	// previous manager, which sets no Ready condition and no observed generation). KEB reads only the state.
	ReportedReady bool
}

// Decision is the next step, the one action to take now, and the status to report meanwhile.
type Decision struct {
	Step    Step
	Action  Action
	State   State
	Reason  Reason
	Message string
	// RequeueAfter asks to look again after this long even without a watch event (0: wait for an event).
	RequeueAfter time.Duration
	// Transient marks a decision made after a failed action that deserves a rate-limited retry.
	Transient bool
	// RetryAttempt is the number ActionRetryShoot records with the retry request (1 for the first retry of a
	// shoot generation); zero for every other action.
	RetryAttempt int
	// AdoptionHold is Intent.AdoptionHold of the input decided on: the adoption review holds the operator's
	// changes to the shoot (reported as the condition ConditionAdoptionReviewRequired, whatever the state).
	AdoptionHold string
}
