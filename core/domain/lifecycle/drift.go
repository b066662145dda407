package lifecycle

import (
	"hash/fnv"
	"time"
)

// configurationDue reports whether the runtime's configuration is to be written now: the desired state differs from
// the one last reached in more than Gardener's reconcile time, or the drift period since then has passed (objects
// changed or deleted by hand inside the runtime are set back then, and the reconcile time is brought up to date).
// Never while the cluster hibernates.
func configurationDue(in Input, now time.Time) bool {
	if in.Shoot.HibernationRequested || in.Shoot.Hibernated {
		// A hibernated cluster has no API server to write to. What it holds survives hibernation; a change made
		// meanwhile, or a drift period that passed, is written once it woke up.
		return false
	}
	if in.Intent.AdoptionHold != "" {
		// Held for the adoption review: nothing is written for the Runtime, the previous manager's configuration
		// inside the runtime stands until the takeover (docs/operations/migration.md).
		return false
	}
	c := in.Access.Configuration
	if c.AppliedHash == "" || (c.AppliedHash != c.DesiredHash && !c.OnlyReconcileTimeDiffers) {
		return true
	}
	return !now.Before(c.AppliedAt.Add(driftPeriod(in)))
}

// driftWait is how long until the configuration is due again by the drift period (at least a second).
func driftWait(in Input, now time.Time) time.Duration {
	wait := in.Access.Configuration.AppliedAt.Add(driftPeriod(in)).Sub(now)
	return max(wait, time.Second)
}

// driftPeriod is the runtime's drift period: the configured one stretched by up to a tenth, by runtime ID, so that
// runtimes configured at the same moment (an operator restart) do not all come due at once.
func driftPeriod(in Input) time.Duration {
	p := in.DriftPeriod
	if p <= 0 {
		p = DefaultDriftPeriod
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(in.Intent.RuntimeID)) // writing to a hash never fails
	return p + time.Duration(int64(p/10)*int64(h.Sum32()%1000)/1000)
}
