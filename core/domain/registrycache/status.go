package registrycache

import (
	"fmt"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Reason is the stable reason of a RegistryCacheConfig's condition; customers and tools match on it.
type Reason string

// Condition reasons.
const (
	// ReasonApplied: the cache is in the cluster's registry-cache configuration and Gardener reconciled it.
	ReasonApplied Reason = "Applied"
	// ReasonPending: the cache is accepted and written to the runtime's configuration; the cluster is being updated.
	ReasonPending Reason = "Pending"
	// ReasonRuntimeSpecConflict: Runtime.spec.imageRegistryCache is owned by another field manager (e.g. KEB);
	// the operator does not overwrite it. An operator of the landscape must resolve it.
	ReasonRuntimeSpecConflict      Reason = "RuntimeSpecConflict"
	ReasonInvalidUpstream          Reason = "InvalidUpstream"
	ReasonInvalidRemoteURL         Reason = "InvalidRemoteURL"
	ReasonInvalidVolumeSize        Reason = "InvalidVolumeSize"
	ReasonInvalidGarbageCollection Reason = "InvalidGarbageCollection"
	ReasonInvalidProxy             Reason = "InvalidProxy"
	ReasonInvalidSpec              Reason = "InvalidSpec"
	ReasonDuplicateUpstream        Reason = "DuplicateUpstream"
	ReasonUpstreamUnreachable      Reason = "UpstreamUnreachable"
	ReasonSecretMissing            Reason = "SecretMissing"
	ReasonSecretInvalid            Reason = "SecretInvalid"
	// ReasonSecretCopyConflict: the garden already holds a Secret under the name of this cache's copy of the
	// credentials that is not that copy (someone placed it there); it is never used. The landscape's operators
	// must remove it.
	ReasonSecretCopyConflict Reason = "SecretCopyConflict"
)

// ConditionType is the type of the condition the operator keeps on every RegistryCacheConfig.
const ConditionType = "RegistryCacheConfigured"

// States of status.state of a RegistryCacheConfig.
const (
	StateReady   = "Ready"
	StatePending = "Pending"
	StateError   = "Error"
)

// Status is what the operator reports on a RegistryCacheConfig: status.state and its one condition.
type Status struct {
	State string
	// ConditionStatus is "True", "False" or "Unknown".
	ConditionStatus    string
	Reason             Reason
	Message            string
	ObservedGeneration int64
}

// Applied tells, per cache, whether the shoot carries it (the same values) and Gardener reconciled that.
type Applied func(Entry) bool

// StatusOf is the status of config c after the plan was written (conflict: the Runtime spec could not be written).
func StatusOf(c Config, p Plan, applied Applied, conflict bool) Status {
	v, ok := p.Verdicts[c.Key()]
	st := Status{ObservedGeneration: c.Generation}
	switch {
	case !ok:
		st.State, st.ConditionStatus, st.Reason, st.Message = StateError, "False", ReasonInvalidSpec, "The object was not evaluated."
	case !v.Accepted:
		st.State, st.ConditionStatus, st.Reason = StateError, "False", v.Reason
		st.Message = fmt.Sprintf("Not applied: %s: %s.", v.Field, v.Message)
	case conflict:
		st.State, st.ConditionStatus, st.Reason = StateError, "False", ReasonRuntimeSpecConflict
		st.Message = "Not applied: the cluster's registry cache configuration is managed elsewhere; contact the operators of the landscape."
	default:
		e, _ := entryOf(p, c)
		if applied(e) {
			st.State, st.ConditionStatus, st.Reason = StateReady, "True", ReasonApplied
			st.Message = fmt.Sprintf("The cache for %s is active in the cluster.", c.Cache.Upstream)
		} else {
			st.State, st.ConditionStatus, st.Reason = StatePending, "Unknown", ReasonPending
			st.Message = fmt.Sprintf("The cache for %s is accepted; the cluster is being updated.", c.Cache.Upstream)
		}
	}
	return st
}

func entryOf(p Plan, c Config) (Entry, bool) {
	for _, e := range p.Entries {
		if e.Namespace == c.Namespace && e.Name == c.Name {
			return e, true
		}
	}
	return Entry{}, false
}

// Accepted counts the accepted configs of a plan.
func (p Plan) Accepted() int {
	n := 0
	for _, v := range p.Verdicts {
		if v.Accepted {
			n++
		}
	}
	return n
}

// ShootView is what the shoot of a runtime holds of registry caches.
type ShootView struct {
	// Exists is false when the runtime has no shoot (yet, or any more).
	Exists bool
	// Caches are the caches of the registry-cache extension (enabled), with CredentialsSecret resolved through
	// spec.resources.
	Caches []shoot.RegistryCache
	// ReferencedSecrets are the Secrets spec.resources references (any extension's): they must not be deleted.
	ReferencedSecrets []string
	// Reconciled is true when Gardener reconciled the shoot's current generation successfully.
	Reconciled bool
}

// AppliedIn returns the Applied function of a shoot: a cache is applied when the shoot holds it with the same
// values and Gardener reconciled the shoot since.
func AppliedIn(v ShootView) Applied {
	return func(e Entry) bool {
		if !v.Exists || !v.Reconciled {
			return false
		}
		for _, c := range v.Caches {
			if CacheEqual(c, e.Cache) {
				return true
			}
		}
		return false
	}
}
