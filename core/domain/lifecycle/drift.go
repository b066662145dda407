package lifecycle

import (
	"hash/fnv"
	"time"
)

// configurationDue reports whether the runtime's configuration is to be written now: the desired state differs from
// the one last reached, or the drift period since then has passed (objects changed or deleted by hand inside the
// runtime are set back then). Never while the cluster hibernates.
func configurationDue(in Input, now time.Time) bool {
	if in.Shoot.HibernationRequested || in.Shoot.Hibernated {
		// A hibernated cluster has no API server to write to; waking up is a Gardener operation whose success
		// changes the desired state (lastReconcileTime), so the configuration is written right after.
		return false
	}
	c := in.Access.Configuration
	if c.AppliedHash == "" || c.AppliedHash != c.DesiredHash {
		return true
	}
	return !now.Before(c.AppliedAt.Add(driftPeriod(in)))
}

// refreshAfterReady reports whether the configuration due now may wait until Ready is reported: everything was
// reached (during the early access phase, while Gardener finished) except the shoot's reconcile time that
// Gardener's Succeeded changed. Writing it first would put a round of requests into the runtime on the path from
// Succeeded to Ready (P1); it is written on the next pass instead, a second later.
func refreshAfterReady(in Input) bool {
	c := in.Access.Configuration
	return c.OnlyReconcileTimeDue && !c.ReadyReported
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
