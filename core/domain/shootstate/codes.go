package shootstate

import "time"

// ErrorCode is a machine-readable Gardener error code (core.gardener.cloud ErrorCode).
type ErrorCode string

// Gardener error codes the operator decides on.
const (
	ErrInfraUnauthenticated          ErrorCode = "ERR_INFRA_UNAUTHENTICATED"
	ErrInfraUnauthorized             ErrorCode = "ERR_INFRA_UNAUTHORIZED"
	ErrInfraQuotaExceeded            ErrorCode = "ERR_INFRA_QUOTA_EXCEEDED"
	ErrInfraRateLimitsExceeded       ErrorCode = "ERR_INFRA_RATE_LIMITS_EXCEEDED"
	ErrInfraDependencies             ErrorCode = "ERR_INFRA_DEPENDENCIES"
	ErrRetryableInfraDependencies    ErrorCode = "ERR_RETRYABLE_INFRA_DEPENDENCIES"
	ErrInfraResourcesDepleted        ErrorCode = "ERR_INFRA_RESOURCES_DEPLETED"
	ErrCleanupClusterResources       ErrorCode = "ERR_CLEANUP_CLUSTER_RESOURCES"
	ErrConfigurationProblem          ErrorCode = "ERR_CONFIGURATION_PROBLEM"
	ErrRetryableConfigurationProblem ErrorCode = "ERR_RETRYABLE_CONFIGURATION_PROBLEM"
	ErrProblematicWebhook            ErrorCode = "ERR_PROBLEMATIC_WEBHOOK"
)

// nonRetryable are codes no retry can fix: the cloud credentials are wrong or lack permissions. A person must act.
var nonRetryable = map[ErrorCode]bool{
	ErrInfraUnauthenticated: true,
	ErrInfraUnauthorized:    true,
}

// forceDeletable are the codes for which the gardener-apiserver accepts confirmation.gardener.cloud/force-deletion
// on a shoot that is being deleted (its ValidateForceDeletion); the set is a fact about Gardener, not a choice.
var forceDeletable = map[ErrorCode]bool{
	ErrInfraUnauthenticated:    true,
	ErrInfraUnauthorized:       true,
	ErrInfraDependencies:       true,
	ErrCleanupClusterResources: true,
	ErrConfigurationProblem:    true,
}

// Retryability says whether a failed shoot operation may succeed when retried.
type Retryability int

const (
	// RetryUnknown means Gardener gave no codes: retry a few times, then give up.
	RetryUnknown Retryability = iota
	// Retryable codes (quota, rate limits, dependencies, configuration problems) may clear on their own.
	Retryable
	// NotRetryable codes need a person (credentials).
	NotRetryable
)

// Classify decides whether the codes of a failed operation are worth retrying. Any non-retryable code wins.
func Classify(codes []ErrorCode) Retryability {
	if len(codes) == 0 {
		return RetryUnknown
	}
	for _, c := range codes {
		if nonRetryable[c] {
			return NotRetryable
		}
	}
	return Retryable
}

// ForceDeletionAllowed reports whether Gardener would accept the force-deletion annotation for these codes.
func ForceDeletionAllowed(codes []ErrorCode) bool {
	for _, c := range codes {
		if forceDeletable[c] {
			return true
		}
	}
	return false
}

// Backoff is an exponential retry delay: Base doubled per attempt, capped at Max.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// DefaultBackoff spaces retries of failed shoots from 30 s up to 10 min.
var DefaultBackoff = Backoff{Base: 30 * time.Second, Max: 10 * time.Minute}

// Delay returns the wait before retry number attempt (0-based).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	return d
}
