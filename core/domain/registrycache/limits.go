package registrycache

import "fmt"

// Limits bound what the operator reads of one runtime's RegistryCacheConfig objects. The customer owns the runtime's
// API server (and can put an aggregated API server of their own behind the RegistryCacheConfig resource), so
// without them one runtime could make the operator, which syncs every runtime of the landscape, read without end.
type Limits struct {
	// MaxConfigs is the most objects read of one runtime (operator config registryCache.maxConfigsPerRuntime).
	MaxConfigs int
	// MaxListBytes is the most bytes of list responses read of one runtime in one sync, as received after
	// decompression (registryCache.maxListBytesPerRuntime).
	MaxListBytes int64
}

// Defaults of Limits. A runtime has a handful of caches (spec.imageRegistryCache of a Runtime holds at most 20). An
// object as the module's users write it is about 0.7 KiB on the wire with the managed fields of one apply (measured
// against a real API server), 1 KiB with kubectl's last-applied annotation: 100 of them take about 100 KiB, well
// within 256 KiB. The byte limit is what bounds memory: decoding a list costs up to about 25 times its bytes
// (measured on adversarial JSON of 1 MiB: 23 MiB live at the peak), so 256 KiB is at most about 6 MiB per sync
// worker.
const (
	DefaultMaxConfigs   = 100
	DefaultMaxListBytes = 256 << 10
)

// Config keys that set the limits: named in messages, so that the landscape's operators know what to change.
const (
	KeyMaxConfigs   = "registryCache.maxConfigsPerRuntime"
	KeyMaxListBytes = "registryCache.maxListBytesPerRuntime"
)

// Reasons of a runtime whose objects exceed the limits: no object is evaluated, nothing is applied.
const (
	// ReasonTooManyConfigs: the runtime holds more RegistryCacheConfig objects than Limits.MaxConfigs (or its API
	// server answered the list with more pages than that many objects need).
	ReasonTooManyConfigs Reason = "TooManyConfigs"
	// ReasonConfigsTooLarge: the list responses of the runtime's objects exceed Limits.MaxListBytes.
	ReasonConfigsTooLarge Reason = "ConfigsTooLarge"
	// ReasonKymaTooLarge: the runtime's Kyma resource exceeds Limits.MaxListBytes; whether the module is enabled
	// is unknown, so nothing is evaluated and nothing changes.
	ReasonKymaTooLarge Reason = "KymaTooLarge"
)

// The runtime's own Kyma resource, where the customer enables modules (lifecycle-manager syncs it from the KCP once
// and then reads the customer's changes from it, never writing them back to the KCP's copy).
const (
	KymaNamespace = "kyma-system"
	KymaName      = "default"
	// ModuleName is the registry-cache module's name in the Kyma resource's spec.modules.
	ModuleName = "registry-cache"
)

// OrDefaults returns l with unset (zero or negative) limits at their defaults.
func (l Limits) OrDefaults() Limits {
	if l.MaxConfigs <= 0 {
		l.MaxConfigs = DefaultMaxConfigs
	}
	if l.MaxListBytes <= 0 {
		l.MaxListBytes = DefaultMaxListBytes
	}
	return l
}

// PageSize is the limit of one list request for at most max objects: max+1, so that one page tells whether there
// are more than max, at most 500 (the API server's usual page), at least 1.
func PageSize(maxConfigs int) int64 {
	return int64(min(max(maxConfigs, 0)+1, 500))
}

// MaxPages is the most pages a list of at most max objects needs from an API server that fills its pages (as the
// API server does for custom resources), plus one for a short page: more pages than that is a list without end.
func MaxPages(maxConfigs int) int {
	n := max(maxConfigs, 0) + 1
	return (n+int(PageSize(maxConfigs))-1)/int(PageSize(maxConfigs)) + 1
}

// OverLimit is the error of a runtime whose RegistryCacheConfig objects exceed the limits. The sync then applies
// nothing: the Runtime keeps the caches it has (and the shoot with it), and the objects it read report Reason.
type OverLimit struct {
	Reason Reason
	// Detail says what was exceeded, naming the limit and its config key.
	Detail string
}

// Error implements error.
func (o *OverLimit) Error() string { return o.Detail }

// TooMany is the OverLimit of more than l.MaxConfigs objects.
func (l Limits) TooMany() *OverLimit {
	return &OverLimit{Reason: ReasonTooManyConfigs, Detail: fmt.Sprintf(
		"the cluster holds more than %d RegistryCacheConfig objects, the most the landscape reads of one cluster (%s)",
		l.MaxConfigs, KeyMaxConfigs)}
}

// Endless is the OverLimit of a list whose API server sent more than pages pages (a continue token without end).
func (l Limits) Endless(pages int) *OverLimit {
	return &OverLimit{Reason: ReasonTooManyConfigs, Detail: fmt.Sprintf(
		"the cluster's API server answered the list of RegistryCacheConfig objects with more than %d pages, more than %d objects need (%s)",
		pages, l.MaxConfigs, KeyMaxConfigs)}
}

// TooLarge is the OverLimit of list responses larger than l.MaxListBytes.
func (l Limits) TooLarge() *OverLimit {
	return &OverLimit{Reason: ReasonConfigsTooLarge, Detail: fmt.Sprintf(
		"the cluster's RegistryCacheConfig objects take more than %d bytes together, the most the landscape reads of one cluster (%s)",
		l.MaxListBytes, KeyMaxListBytes)}
}

// KymaTooLarge is the OverLimit of a Kyma resource whose response is larger than l.MaxListBytes.
func (l Limits) KymaTooLarge() *OverLimit {
	return &OverLimit{Reason: ReasonKymaTooLarge, Detail: fmt.Sprintf(
		"the cluster's Kyma resource %s/%s takes more than %d bytes, the most the landscape reads of one cluster (%s)",
		KymaNamespace, KymaName, l.MaxListBytes, KeyMaxListBytes)}
}

// Status is what an object read before the limit was hit reports: not evaluated, and why. Caches applied before
// stay in the cluster, so the message says that nothing changes rather than that the cache is gone.
func (o *OverLimit) Status(c Config) Status {
	return Status{State: StateError, ConditionStatus: "False", Reason: o.Reason, ObservedGeneration: c.Generation,
		Message: fmt.Sprintf("Not evaluated: %s. Until the cluster is within the limit no change to any registry cache is applied; the caches already in the cluster keep working.", o.Detail)}
}
