package lifecycle

import (
	"time"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/deletion"
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
}

// Problem is a validation failure in words a person can act on.
type Problem struct {
	Field   string
	Message string
}

// Access is what the operator observed of access to the runtime.
type Access struct {
	// GardenerClusterInSync is true when the GardenerCluster named by the runtime ID exists with the expected spec.
	GardenerClusterInSync bool
	// SecretExists is true when the kubeconfig Secret exists and is filled.
	SecretExists bool
	// ConfiguredGeneration is the Runtime generation whose administrators were last configured inside
	// the runtime (0: never).
	ConfiguredGeneration int64
}

// Input is everything Decide looks at.
type Input struct {
	Intent Intent
	Shoot  cluster.Shoot
	Access Access
	// SeedAvailable is nil until checked (only needed with EnforceSeedLocation).
	SeedAvailable *bool
	// DeletionsFrozen is true while the deletion guard stops deletions (brake, breaker, clock): a Runtime waiting
	// for an old cluster says so.
	DeletionsFrozen bool
	// DeletionPolicy tells when an old cluster holding the shoot name is due.
	DeletionPolicy deletion.Policy
	// Backoff spaces retries of failed shoots; zero means cluster.DefaultBackoff.
	Backoff cluster.Backoff
	// MaxUnknownRetries bounds retries of failures without error codes; zero means DefaultMaxUnknownRetries.
	MaxUnknownRetries int
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
}
