package kubeconfig

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// Defaults of the rotation policy.
const (
	// DefaultRotationFraction is the share of a kubeconfig's lifetime after which it is replaced.
	DefaultRotationFraction = 0.6
	// DefaultJitterFraction is the largest per-cluster delay added to the rotation point, as a share of the lifetime
	// (5% of 24h = up to 72 minutes), so clusters issued in the same second do not all rotate in the same second.
	DefaultJitterFraction = 0.05
	// DefaultSafetyMargin is how long before expiry a kubeconfig is replaced at the latest.
	DefaultSafetyMargin = 30 * time.Minute
)

// Policy decides when a kubeconfig is issued. See Decide for the exact rule; docs/kubeconfig.md explains it for users.
type Policy struct {
	// Validity is the lifetime requested for new kubeconfigs. A recorded kubeconfig is treated as living at most this
	// long, so shortening the validity takes effect at once instead of after the old kubeconfigs expire.
	Validity time.Duration
	// RotationFraction (0 < f < 1) is the share of the lifetime after which a kubeconfig is replaced.
	RotationFraction float64
	// JitterFraction (0 <= j < 1-RotationFraction) is the largest per-cluster delay after the rotation point, as a
	// share of the lifetime.
	JitterFraction float64
	// SafetyMargin is how long before expiry a kubeconfig is replaced at the latest. It is capped at half of the time
	// between the rotation point and expiry, so a short lifetime never makes a kubeconfig due the moment it is issued.
	SafetyMargin time.Duration
}

// NewPolicy returns the policy for the given validity and rotation fraction with the default jitter and margin.
func NewPolicy(validity time.Duration, rotationFraction float64) (Policy, error) {
	p := Policy{
		Validity:         validity,
		RotationFraction: rotationFraction,
		JitterFraction:   DefaultJitterFraction,
		SafetyMargin:     DefaultSafetyMargin,
	}
	if rotationFraction > 0 && rotationFraction < 1 && p.JitterFraction >= 1-rotationFraction {
		p.JitterFraction = (1 - rotationFraction) / 2
	}
	return p, p.Validate()
}

// Validate reports every invalid field at once.
func (p Policy) Validate() error {
	var errs []error
	if p.Validity <= 0 {
		errs = append(errs, fmt.Errorf("kubeconfig validity %s must be positive", p.Validity))
	}
	if p.RotationFraction <= 0 || p.RotationFraction >= 1 {
		errs = append(errs, fmt.Errorf("rotation fraction %g must be between 0 and 1 (exclusive)", p.RotationFraction))
	}
	if p.JitterFraction < 0 || p.JitterFraction >= 1-p.RotationFraction {
		errs = append(errs, fmt.Errorf("jitter fraction %g must be at least 0 and below 1-rotation fraction", p.JitterFraction))
	}
	if p.SafetyMargin < 0 {
		errs = append(errs, fmt.Errorf("safety margin %s must not be negative", p.SafetyMargin))
	}
	return errors.Join(errs...)
}

// Trigger says why a kubeconfig is issued.
type Trigger string

// Triggers of Decide. TriggerNone means nothing is issued.
const (
	TriggerNone Trigger = ""
	// TriggerInitial: the Secret does not exist.
	TriggerInitial Trigger = "initial"
	// TriggerForced: the force-rotation annotation asks for a new kubeconfig.
	TriggerForced Trigger = "forced"
	// TriggerTime: the rotation point of the recorded kubeconfig has passed.
	TriggerTime Trigger = "time"
	// TriggerExpired: the recorded kubeconfig has expired.
	TriggerExpired Trigger = "expired"
	// TriggerInvalid: the Secret lacks the kubeconfig, or its timestamps are missing, unparsable or inconsistent.
	TriggerInvalid Trigger = "invalid"
	// TriggerShootChanged: the kubeconfig was issued for another shoot (another name, or the shoot was re-created).
	TriggerShootChanged Trigger = "shoot-changed"
)

// Rotation reports whether the Secret already existed, that is whether issuing replaces a kubeconfig.
func (t Trigger) Rotation() bool { return t != TriggerNone && t != TriggerInitial }

// Recorded is what the kubeconfig Secret says about the kubeconfig it holds, as read from its metadata.
type Recorded struct {
	// SecretExists is false when there is no Secret.
	SecretExists bool
	// HasKubeconfig is true when the Secret's key holds non-empty data.
	HasKubeconfig bool
	// IssuedAt and ExpiresAt are the raw annotation values (AnnotationLastSync, AnnotationExpiresAt); empty when absent.
	IssuedAt  string
	ExpiresAt string
	// Shoot is the shoot the kubeconfig was issued for (AnnotationShootName, AnnotationShootUID); empty in Secrets
	// written before the operator recorded it.
	Shoot ShootRef
}

// ShootRef names one shoot object: its name and its UID (a shoot deleted and created again under the same name has
// another UID, and another CA: a kubeconfig of the old one does not work for it).
type ShootRef struct {
	Name, UID string
}

// differs reports whether a recorded reference names another shoot than current. A reference that was never
// recorded (older Secrets) or a current UID that is not known does not count as different: it is recorded with the
// next regular rotation, so an upgrade does not re-issue every kubeconfig at once.
func (r ShootRef) differs(current ShootRef) bool {
	switch {
	case r.Name == "" || current.Name == "":
		return false
	case r.Name != current.Name:
		return true
	}
	return r.UID != "" && current.UID != "" && r.UID != current.UID
}

// Decision is the outcome of Decide.
type Decision struct {
	// Issue is true when a new kubeconfig must be issued now.
	Issue bool
	// Trigger says why (TriggerNone when Issue is false).
	Trigger Trigger
	// RotateAt is when the recorded kubeconfig becomes due; zero when Issue is true.
	RotateAt time.Time
	// ExpiresAt is the recorded expiry when it could be read; zero otherwise.
	ExpiresAt time.Time
	// Detail explains the decision in words, for logs and condition messages.
	Detail string
}

// Decide says whether the kubeconfig of cluster clusterKey must be issued at now, and otherwise when it is due.
//
// A kubeconfig is issued now when: force is set; the Secret does not exist; its key is empty; it was issued for
// another shoot than current (ShootRef.differs); either timestamp is
// missing or unparsable, or expiry is not after issue; the kubeconfig has expired; or now has reached its rotation
// point. The rotation point of a kubeconfig issued at I and expiring at E is
//
//	L        = min(E - I, Validity)                                  (the lifetime)
//	margin   = min(SafetyMargin, (1-RotationFraction)*L/2)
//	RotateAt = min(I + RotationFraction*L + jitter(clusterKey)*JitterFraction*L, E - margin)
//
// where jitter(clusterKey) in [0,1) is a hash of the cluster key, the same on every call. RotateAt is always after
// I + RotationFraction*L and at least margin before E.
func (p Policy) Decide(now time.Time, clusterKey string, rec Recorded, force bool, current ShootRef) Decision {
	issue := func(t Trigger, detail string) Decision { return Decision{Issue: true, Trigger: t, Detail: detail} }
	switch {
	case force:
		return issue(TriggerForced, "rotation forced by annotation")
	case !rec.SecretExists:
		return issue(TriggerInitial, "kubeconfig Secret does not exist")
	case !rec.HasKubeconfig:
		return issue(TriggerInvalid, "kubeconfig Secret holds no kubeconfig")
	case rec.Shoot.differs(current):
		return issue(TriggerShootChanged, fmt.Sprintf("the kubeconfig was issued for shoot %s (uid %s), the cluster names shoot %s (uid %s)",
			rec.Shoot.Name, rec.Shoot.UID, current.Name, current.UID))
	}
	issued, okIssued := parseTime(rec.IssuedAt)
	expires, okExpires := parseTime(rec.ExpiresAt)
	switch {
	case !okIssued:
		return issue(TriggerInvalid, fmt.Sprintf("issue time %q is missing or not RFC3339", rec.IssuedAt))
	case !okExpires:
		return issue(TriggerInvalid, fmt.Sprintf("expiry %q is missing or not RFC3339", rec.ExpiresAt))
	case !expires.After(issued):
		return issue(TriggerInvalid, fmt.Sprintf("expiry %s is not after issue time %s", rec.ExpiresAt, rec.IssuedAt))
	case !now.Before(expires):
		d := issue(TriggerExpired, "kubeconfig expired at "+FormatTime(expires))
		d.ExpiresAt = expires
		return d
	}
	rotateAt := p.RotateAt(clusterKey, issued, expires)
	if !now.Before(rotateAt) {
		d := issue(TriggerTime, "rotation point "+FormatTime(rotateAt)+" reached")
		d.ExpiresAt = expires
		return d
	}
	return Decision{
		RotateAt:  rotateAt,
		ExpiresAt: expires,
		Detail:    "kubeconfig valid until " + FormatTime(expires) + ", rotation at " + FormatTime(rotateAt),
	}
}

// RotateAt is the rotation point of a kubeconfig of cluster clusterKey issued at issued and expiring at expires
// (expires after issued); see Decide.
func (p Policy) RotateAt(clusterKey string, issued, expires time.Time) time.Time {
	lifetime := expires.Sub(issued)
	if p.Validity > 0 && p.Validity < lifetime {
		lifetime = p.Validity
	}
	margin := min(p.SafetyMargin, time.Duration((1-p.RotationFraction)*float64(lifetime)/2))
	point := issued.Add(time.Duration(p.RotationFraction*float64(lifetime)) +
		time.Duration(jitter(clusterKey)*p.JitterFraction*float64(lifetime)))
	if latest := expires.Add(-margin); point.After(latest) {
		return latest
	}
	return point
}

// jitter maps a cluster key to [0,1): stable across restarts and replicas. FNV-1a alone keeps keys that differ only
// in their last characters (UUIDs issued in sequence) close together in the high bits, so its sum goes through the
// splitmix64 finalizer, which spreads every input bit over the whole word.
func jitter(clusterKey string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(clusterKey))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / float64(1<<53)
}
