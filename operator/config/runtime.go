package config

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of the runtime section.
const (
	// DefaultDriftPeriod is how long a configuration reached inside a runtime is trusted before it is written again.
	DefaultDriftPeriod = time.Hour
	// DefaultRuntimeTimeout bounds one configuration of a runtime (all its requests together).
	DefaultRuntimeTimeout = 10 * time.Second
	// DefaultStatusProgressInterval is how often at most Gardener's progress alone is written into a Runtime's status.
	DefaultStatusProgressInterval = time.Minute
	// DefaultMaxRetryDelay is the longest a Runtime whose pass failed waits for its next attempt.
	DefaultMaxRetryDelay = 5 * time.Minute
)

// RuntimeConfig configures what the operator keeps inside every runtime: kyma-system, the kyma-provisioning-info
// ConfigMap, the customer's OpenIDConnect resources, the administrators' bindings and optional bootstrap manifests
// (docs/runtime-configuration.md).
type RuntimeConfig struct {
	// DriftPeriod is how long a reached configuration is trusted: after it, the operator writes it again even if
	// nothing changed, which sets back objects changed or deleted by hand (unset: 1h; at least 1s).
	DriftPeriod Duration `json:"driftPeriod,omitempty"`
	// Timeout bounds one configuration of a runtime: an API server that does not answer holds a worker no longer
	// (unset: 10s; 1s to 5m).
	Timeout Duration `json:"timeout,omitempty"`
	// Bootstrap names manifests applied into kyma-system of every runtime before it is Ready; off when unset.
	Bootstrap *BootstrapConfig `json:"bootstrap,omitempty"`
	// AdoptOnly (unset: true) holds every change to a shoot adopted from the previous infrastructure manager until
	// a person approves it for that Runtime (docs/operations/migration.md): at a switch-over the operator takes
	// over only shoots its rendering equals. Shoots it created or already took over are not affected.
	AdoptOnly *bool `json:"adoptOnly,omitempty"`
	// StatusProgressInterval is how often at most a Runtime's status is written when Gardener's progress (the last
	// operation's percentage and description, and the condition messages quoting them) is all that changed; a new
	// state, condition reason or Gardener error is written at once (unset: 1m; 0s: every change; at most 1h).
	StatusProgressInterval Duration `json:"statusProgressInterval,omitempty"`
	// MaxRetryDelay caps the backoff of a Runtime whose pass failed (a runtime API server that does not answer,
	// Gardener unavailable): the delay doubles from 5ms with every failure up to it, so a runtime whose API server
	// answers again is configured at most this long after (unset: 5m; 1s to 1h).
	MaxRetryDelay Duration `json:"maxRetryDelay,omitempty"`
}

// AdoptOnlyEnabled is AdoptOnly with its default (true).
func (r RuntimeConfig) AdoptOnlyEnabled() bool { return r.AdoptOnly == nil || *r.AdoptOnly }

// BootstrapConfig names the KCP objects of the bootstrap manifests.
type BootstrapConfig struct {
	// ConfigMap holds the manifests: every value is YAML, several documents each (keys in lexical order).
	ConfigMap ObjectRef `json:"configMap"`
	// PullSecret is an image pull Secret copied into kyma-system first. It must be of type
	// kubernetes.io/dockerconfigjson and carry the label infrastructuremanager.kyma-project.io/bootstrap-pull-secret=true;
	// another Secret is refused (BootstrapPullSecretRefused) and nothing of the set is applied.
	PullSecret *ObjectRef `json:"pullSecret,omitempty"`
	// AllowedKinds lists what the manifests may hold besides namespaced objects in kyma-system: cluster-scoped kinds
	// (no namespace), namespaced kinds in another namespace, and RBAC kinds (never allowed unlisted). An object of a
	// kind not listed is refused (BootstrapObjectRefused) and nothing of the set is applied. Empty: only namespaced
	// kinds other than RBAC, in kyma-system.
	AllowedKinds []BootstrapKind `json:"allowedKinds,omitempty"`
	// Rollout gives a changed set to the runtimes in waves (unset: waves of DefaultRolloutShare, stopped above
	// DefaultRolloutMaxFailures).
	Rollout *BootstrapRollout `json:"rollout,omitempty"`
}

// Defaults of runtime.bootstrap.rollout: on unless share is 1, because one bad manifest would otherwise reach every
// runtime within one pass.
const (
	DefaultRolloutShare       = 0.1
	DefaultRolloutMaxFailures = 0.05
)

// BootstrapRollout configures the rollout of a changed bootstrap set in waves (docs/runtime-configuration.md).
type BootstrapRollout struct {
	// Share of the runtimes each wave adds, in (0, 1]; 1 gives the set to every runtime at once (unset: 0.1).
	Share *float64 `json:"share,omitempty"`
	// MaxFailures is the share, in [0, 1], of the runtimes that tried the set that may fail it before no further
	// runtime is given it (at least one failure is tolerated; 1: never stopped) (unset: 0.05).
	MaxFailures *float64 `json:"maxFailures,omitempty"`
}

// Policy returns the share and the failure threshold with their defaults; r may be nil.
func (r *BootstrapRollout) Policy() (share, maxFailures float64) {
	share, maxFailures = DefaultRolloutShare, DefaultRolloutMaxFailures
	if r != nil && r.Share != nil {
		share = *r.Share
	}
	if r != nil && r.MaxFailures != nil {
		maxFailures = *r.MaxFailures
	}
	return share, maxFailures
}

// BootstrapKind is an entry of runtime.bootstrap.allowedKinds: an API group ("" for the core group) and kind, exact,
// and for a namespaced kind the namespace it may be applied in.
type BootstrapKind struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
}

func (r *RuntimeConfig) defaults() {
	if !r.DriftPeriod.IsSet() && r.DriftPeriod.Duration == 0 {
		r.DriftPeriod = Set(DefaultDriftPeriod)
	}
	if !r.Timeout.IsSet() && r.Timeout.Duration == 0 {
		r.Timeout = Set(DefaultRuntimeTimeout)
	}
	if !r.StatusProgressInterval.IsSet() && r.StatusProgressInterval.Duration == 0 {
		r.StatusProgressInterval = Set(DefaultStatusProgressInterval)
	}
	if !r.MaxRetryDelay.IsSet() && r.MaxRetryDelay.Duration == 0 {
		r.MaxRetryDelay = Set(DefaultMaxRetryDelay)
	}
}

func validateRuntime(r RuntimeConfig, bad func(key, format string, args ...any)) {
	if r.DriftPeriod.Duration < time.Second {
		bad("runtime.driftPeriod", "must be at least 1s, got %s", r.DriftPeriod.Duration)
	}
	if r.Timeout.Duration < time.Second || r.Timeout.Duration > 5*time.Minute {
		bad("runtime.timeout", "must be between 1s and 5m, got %s", r.Timeout.Duration)
	}
	if r.StatusProgressInterval.Duration < 0 || r.StatusProgressInterval.Duration > time.Hour {
		bad("runtime.statusProgressInterval", "must be between 0s and 1h, got %s", r.StatusProgressInterval.Duration)
	}
	if r.MaxRetryDelay.Duration < time.Second || r.MaxRetryDelay.Duration > time.Hour {
		bad("runtime.maxRetryDelay", "must be between 1s and 1h, got %s", r.MaxRetryDelay.Duration)
	}
	if b := r.Bootstrap; b != nil {
		if b.ConfigMap.Name == "" {
			bad("runtime.bootstrap.configMap.name", "must not be empty")
		}
		if b.PullSecret != nil && b.PullSecret.Name == "" {
			bad("runtime.bootstrap.pullSecret.name", "must not be empty")
		}
		if ro := b.Rollout; ro != nil {
			// NaN fails both comparisons, so it is refused too.
			if ro.Share != nil && !(*ro.Share > 0 && *ro.Share <= 1) {
				bad("runtime.bootstrap.rollout.share", "must be greater than 0 and at most 1, got %v", *ro.Share)
			}
			if ro.MaxFailures != nil && !(*ro.MaxFailures >= 0 && *ro.MaxFailures <= 1) {
				bad("runtime.bootstrap.rollout.maxFailures", "must be between 0 and 1, got %v", *ro.MaxFailures)
			}
		}
		for i, k := range b.AllowedKinds {
			key := fmt.Sprintf("runtime.bootstrap.allowedKinds[%d]", i)
			switch {
			case k.Kind == "":
				bad(key+".kind", "must not be empty")
			case strings.Contains(k.Kind+k.Group+k.Namespace, "*"):
				bad(key, "wildcards are not allowed: list each kind (group %q, kind %q, namespace %q)", k.Group, k.Kind, k.Namespace)
			}
		}
	}
}
