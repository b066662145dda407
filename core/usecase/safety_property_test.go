package usecase_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
)

// claimableByAnotherAccount tells whether KEB's claim for a new global account selects a binding with labels l
// (!dirty,!tenantName,shared!=true; KEB:internal/subscriptions/label_selector.go, BuildForSecretBindingClaim).
func claimableByAnotherAccount(l map[string]string) bool {
	_, dirty := l["dirty"]
	_, tenant := l["tenantName"]
	return !dirty && !tenant && l["shared"] != "true"
}

// Flags of the safety property test. `make test` runs the default; `make test-safety` runs a million sequences.
var (
	safetySequences = flag.Int("safety.sequences", 30000, "random sequences the safety property test runs")
	safetySteps     = flag.Int("safety.steps", 100, "steps per sequence")
	safetySeed      = flag.Uint64("safety.seed", 0, "first seed (0: derived from the time; printed on failure)")
)

func contextFor() context.Context { return context.Background() }

// TestSafetyProperties runs random sequences of KEB creates, updates, deletes and re-creates (same and other ID),
// operator reconciles and reaper ticks, Gardener's progress and failures, cache lag, faults, restores, plan
// relabels, brake and breaker changes and clock jumps against the use cases on the in-memory fakes, and checks
// the safety invariants after every step (see checkInvariants). A failure prints the seed and the shrunk sequence;
// `go test ./core/usecase -run TestSafetyProperties -safety.seed=<seed> -safety.sequences=1` replays it.
func TestSafetyProperties(t *testing.T) {
	// Each sequence builds a world of fakes and throws it away: many short-lived objects on a small heap. With the
	// default GOGC the collector took about a third of this test's CPU (the -short bound, seed 1: 7.9 s of user and
	// system time, 5.0 s with GOGC=400). The full bound is the largest single test in make test.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	n := *safetySequences
	if testing.Short() && n > 3000 {
		n = 3000
		// The skipped subtest marks this run as shortened: make test-all runs the test again without -short, at its
		// full bound (test/cmd/testreport reruns a top-level test one of whose subtests skipped).
		t.Run("full-bound", func(t *testing.T) {
			t.Skipf("-short runs %d of the %d sequences; the full bound runs without -short", n, *safetySequences)
		})
	}
	first := *safetySeed
	if first == 0 {
		first = uint64(time.Now().UnixNano())
	}
	start := time.Now()
	steps := 0
	var total coverage
	for i := 0; i < n; i++ {
		seed := first + uint64(i)
		seq := sequence(seed, *safetySteps)
		failed, err := run(seed, seq, true, &total)
		steps += len(seq)
		if err == nil {
			continue
		}
		shrunk := shrink(seed, seq[:failed+1])
		lines := make([]string, len(shrunk))
		for j, s := range shrunk {
			lines[j] = fmt.Sprintf("  %2d %s", j, s)
		}
		_, shrunkErr := run(seed, shrunk, true, nil)
		t.Fatalf("safety invariant broken (seed %d, sequence %d of %d, step %d): %v\nshrunk to %d steps (%v):\n%s\nreplay: go test ./core/usecase -run TestSafetyProperties -safety.seed=%d -safety.sequences=1",
			seed, i+1, n, failed, err, len(shrunk), shrunkErr, strings.Join(lines, "\n"), seed)
	}
	t.Logf("%d sequences, %d steps, invariants held (first seed %d, %s); exercised: %+v", n, steps, first,
		time.Since(start).Round(time.Millisecond), total)
	// A property that held only because nothing happened proves nothing.
	if n >= 1000 && (total.Deletions == 0 || total.Marks == 0 || total.TakenBack == 0 || total.Restored == 0) {
		t.Errorf("the sequences did not exercise deletion and restore: %+v", total)
	}
	// The breaker trips about once per 1,500 sequences: a short run (3,000) may see none without being wrong.
	if n >= 20000 && total.Tripped == 0 {
		t.Errorf("the sequences did not trip the breaker: %+v", total)
	}
	if n >= 1000 && total.BindingsReturned == 0 {
		t.Errorf("the sequences never gave a sibling's binding back after the hold: %+v", total)
	}
	if n >= 1000 && (total.SecretsWritten == 0 || total.SecretsDeleted == 0 || total.ForeignSecretsKept == 0) {
		t.Errorf("the sequences did not exercise kubeconfig writes, deletions and foreign Secrets: %+v", total)
	}
}

// coverage counts what the sequences made happen.
type coverage struct {
	Marks, Deletions, ForceDeletions, TakenBack, Restored, Adopted, Tripped int
	// SecretsWritten, SecretsDeleted and ForeignSecretsKept count the kubeconfig side: writes and deletions through
	// the store, and Secrets of others that a GardenerCluster named but that stayed untouched.
	SecretsWritten, SecretsDeleted, ForeignSecretsKept int
	// BindingsReturned counts deletion records the hold end wrote as Returned (a sibling's binding given back).
	BindingsReturned int
}

func (c *coverage) add(w *world) {
	if c == nil {
		return
	}
	c.Marks += len(w.garden.Marks())
	for _, d := range w.garden.Deletions() {
		if d.Force {
			c.ForceDeletions++
		} else {
			c.Deletions++
		}
	}
	for _, wr := range w.garden.Writes() {
		switch wr.Method {
		case "CancelDeletion":
			c.TakenBack++
		case "Adopt":
			c.Adopted++
		}
	}
	for _, rt := range w.kcp.List() {
		if rt.Restored {
			c.Restored++
		}
	}
	if w.guard.Tripped() {
		c.Tripped++
	}
	for _, r := range w.records.Written() {
		if r.BindingRelease == deletion.BindingReturned {
			c.BindingsReturned++
		}
	}
	for _, ch := range w.store.Changes() {
		switch ch.Op {
		case "Write":
			c.SecretsWritten++
		case "Delete":
			c.SecretsDeleted++
		}
	}
	for _, g := range w.clusters.live {
		ref := g.secret.Namespace + "/" + g.secret.Name
		if o, ok := w.origins[ref]; ok && o.kind != "operator" && w.store.Exists(g.secret.Namespace, g.secret.Name) {
			c.ForeignSecretsKept++
		}
	}
}

func sequence(seed uint64, length int) []step {
	r := rand.New(rand.NewPCG(seed, seed*31+7))
	side := rand.New(rand.NewPCG(seed^0x6b756265, seed*37+11))
	seq := make([]step, length)
	for i := range seq {
		seq[i] = randomStep(r)
		seq[i].Side = randomSideStep(side)
	}
	return seq
}

// run plays seq and returns the index of the first step after which an invariant broke. With drain, the end of
// the sequence also checks liveness: after a drain, nothing waits for deletion any more.
func run(seed uint64, seq []step, drain bool, cov *coverage) (int, error) {
	w := newWorld(seed)
	c := newChecker(w)
	for i, s := range seq {
		w.apply(s)
		if err := c.check(); err != nil {
			return i, err
		}
	}
	cov.add(w)
	if !drain {
		return -1, nil
	}
	w.drain()
	if err := c.check(); err != nil {
		return len(seq) - 1, fmt.Errorf("during the drain: %w", err)
	}
	if err := c.drained(); err != nil {
		return len(seq) - 1, err
	}
	return -1, nil
}

// shrink removes steps as long as the sequence still breaks an invariant (greedy, one step at a time).
func shrink(seed uint64, seq []step) []step {
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(seq); i++ {
			candidate := append(append([]step{}, seq[:i]...), seq[i+1:]...)
			if _, err := run(seed, candidate, true, nil); err != nil {
				seq, changed = candidate, true
				i--
			}
		}
	}
	return seq
}

// checker holds what invariants need to remember between steps.
type checker struct {
	w         *world
	deletions int
	records   int
	// kcpDue is, per shoot UID, the last deletion record the operator wrote in the KCP.
	kcpDue map[string]deletion.KCPRecord
	// deletedAt is, per shoot UID, when the reaper deleted it (forcing may only follow).
	deletedAt     map[string]time.Time
	times         []time.Time
	secretChanges int
}

func newChecker(w *world) *checker {
	return &checker{w: w, kcpDue: map[string]deletion.KCPRecord{}, deletedAt: map[string]time.Time{}}
}

// check verifies the safety invariants, for deletions and force-deletions alike:
//  1. no shoot is deleted before its mark plus its recorded window (within the clock tolerance), and never while a
//     Runtime with the ID of its record that names the shoot exists; whatever someone wrote on the shoot (forged
//     records), never while the Runtime it belongs to exists, never without a record of its deletion in the KCP and
//     never before the due time recorded there; a force-deletion only follows the reaper's own deletion of the shoot
//     after deletion.forceDeletionAfter;
//  2. no shoot the operator did not create or adopt is written or deleted, and a predecessor's shoot is adopted
//     only for its own runtime;
//  3. every managed shoot without a Runtime carries a deletion record (no orphans);
//  4. deletions within any period of the circuit breaker never exceed its limit;
//  7. no Secret is written or deleted that is not owned by the GardenerCluster acting (checkSecrets).
func (c *checker) check() error {
	w := c.w
	n, err := w.checkSecrets(c.secretChanges)
	if err != nil {
		return err
	}
	c.secretChanges = n
	ctx := contextFor()
	policy := modelPolicy()
	if err := w.checkBindings(); err != nil {
		return err
	}
	deletions := w.garden.Deletions()
	marks := w.garden.Marks()
	written := w.records.Written()
	for _, r := range written[c.records:] {
		c.kcpDue[r.ShootUID] = r
	}
	c.records = len(written)
	for _, d := range deletions[c.deletions:] {
		verb := "deleted"
		if d.Force {
			verb = "force-deleted"
		}
		pd := d.Shoot.Marks.PendingDeletion
		if pd == nil || !d.Shoot.Marks.Managed {
			return fmt.Errorf("shoot %s (uid %s) %s without a deletion record of this operator", d.Shoot.Name, d.Shoot.UID, verb)
		}
		// Forcing a deletion Gardener already runs loses nothing more (a deleting shoot cannot be taken back): a
		// Runtime created again meanwhile waits for the old cluster to be gone, so that part does not apply to it.
		if rt, ok := w.runtimes[pd.RuntimeID]; ok && rt.shoot == d.Shoot.Name && !d.Force {
			return fmt.Errorf("shoot %s %s while Runtime %s of its record exists", d.Shoot.Name, verb, pd.RuntimeID)
		}
		// Whatever its record says (someone may have forged it): the cluster of a Runtime that exists is never
		// deleted, and never before the due time the operator recorded in the KCP when it let the Runtime go.
		if owner, ok := w.owner[d.Shoot.UID]; ok && !d.Force {
			if rt, live := w.runtimes[owner]; live && rt.shoot == d.Shoot.Name {
				return fmt.Errorf("shoot %s %s while its Runtime %s exists (record names %s)", d.Shoot.Name, verb, owner, pd.RuntimeID)
			}
		}
		kcp, recorded := c.kcpDue[d.Shoot.UID]
		if !recorded {
			return fmt.Errorf("shoot %s (uid %s) %s, but its deletion was never recorded in the KCP", d.Shoot.Name, d.Shoot.UID, verb)
		}
		kcpDue := kcp.DueAt
		if limit := kcp.MarkedAt.Add(policy.MaxWindow); limit.Before(kcpDue) {
			kcpDue = limit
		}
		if earliest := kcpDue.Add(-policy.ClockTolerance()); d.At.Before(earliest) {
			return fmt.Errorf("shoot %s %s at %s, before the due time %s recorded in the KCP", d.Shoot.Name, verb,
				d.At.Format(time.RFC3339), kcp.DueAt.Format(time.RFC3339))
		}
		var markedAt time.Time
		var ownMark shootstate.PendingDeletion // the operator's own last record on the shoot
		for _, m := range marks {
			if m.UID == d.Shoot.UID && !m.At.After(d.At) {
				markedAt, ownMark = m.At, m.Record
			}
		}
		// A record someone forged says nothing about the window; the operator's own mark and the KCP's record do.
		forged := w.forged[d.Shoot.UID]
		if markedAt.IsZero() && !forged {
			return fmt.Errorf("shoot %s %s, but no mark of it was ever written", d.Shoot.Name, verb)
		}
		if earliest := markedAt.Add(pd.Window).Add(-policy.ClockTolerance()); !forged && d.At.Before(earliest) {
			return fmt.Errorf("shoot %s %s at %s, before its window (marked %s, window %s) ended", d.Shoot.Name, verb,
				d.At.Format(time.RFC3339), markedAt.Format(time.RFC3339), pd.Window)
		}
		// A cluster that never became healthy is deleted at once (decided when it was marked; Gardener may have
		// finished creating it since): the runtime was never Ready.
		// The window is what the operator gave the deletion: its own mark's, or the KCP record's if that is longer
		// (a release retried later records a later due time); a never-healthy cluster gets none.
		window := max(kcp.DueAt.Sub(kcp.MarkedAt), ownMark.Window)
		neverHealthy := (window == 0 || (!markedAt.IsZero() && ownMark.Window == 0)) && !w.readyWhenDeleted[d.Shoot.UID]
		if longest := w.longest[d.Shoot.UID]; window < longest && !neverHealthy {
			return fmt.Errorf("shoot %s %s with window %s, but it was created for a plan with the window %s (a relabel shortened it)",
				d.Shoot.Name, verb, window, longest)
		}
		if d.Force {
			// Forcing is only ever the second step of a deletion the reaper started itself, after the delay.
			started, ok := c.deletedAt[d.Shoot.UID]
			if !ok {
				return fmt.Errorf("shoot %s force-deleted, but the reaper never deleted it", d.Shoot.Name)
			}
			if earliest := started.Add(policy.ForceDeletionAfter).Add(-policy.ClockTolerance()); d.At.Before(earliest) {
				return fmt.Errorf("shoot %s force-deleted at %s, before %s after its deletion started at %s", d.Shoot.Name,
					d.At.Format(time.RFC3339), policy.ForceDeletionAfter, started.Format(time.RFC3339))
			}
			continue
		}
		c.deletedAt[d.Shoot.UID] = d.At
		c.times = append(c.times, d.At)
	}
	c.deletions = len(deletions)
	for _, wr := range w.garden.Writes() {
		if uid, ok := w.foreign[wr.Shoot]; ok && uid == wr.UID {
			return fmt.Errorf("foreign shoot %s was written by %s", wr.Shoot, wr.Method)
		}
	}
	for name, uid := range w.foreign {
		if s, _ := w.garden.Get(ctx, name, ports.ReadLive); !s.Exists || s.UID != uid || s.Deleting() {
			return fmt.Errorf("foreign shoot %s (uid %s) was deleted (now %+v)", name, uid, s)
		}
	}
	for _, name := range w.garden.Shoots() {
		s, _ := w.garden.Get(ctx, name, ports.ReadLive)
		if owner, ok := w.preds[s.UID]; ok && s.Marks.Managed && s.Marks.RuntimeID != owner {
			return fmt.Errorf("the predecessor's shoot %s of runtime %s now belongs to runtime %s", name, owner, s.Marks.RuntimeID)
		}
		if !s.Marks.Managed || s.Deleting() || s.Marks.PendingDeletion != nil {
			continue
		}
		if _, ok := w.runtimes[s.Marks.RuntimeID]; !ok {
			return fmt.Errorf("orphan: managed shoot %s of runtime %q has neither a Runtime nor a deletion record", name, s.Marks.RuntimeID)
		}
	}
	budget := policy.Budget
	window := budget.Per - 2*policy.ClockTolerance()
	for i, t := range c.times {
		n := 0
		for _, u := range c.times[:i+1] {
			if t.Sub(u) < window {
				n++
			}
		}
		if n > budget.Limit {
			return fmt.Errorf("%d deletions within %s (limit %d)", n, budget.Per, budget.Limit)
		}
	}
	return nil
}

// drained checks liveness after a drain: every deletion record was reaped or restored. A record that is not
// trustworthy (edited) is kept on purpose until a person looks: the gauge kim_deletion_records_invalid and its
// alert report it.
func (c *checker) drained() error {
	ctx := contextFor()
	for _, name := range c.w.garden.Shoots() {
		s, _ := c.w.garden.Get(ctx, name, ports.ReadLive)
		if pd := s.Marks.PendingDeletion; pd != nil && deletion.CheckRecord(*pd, modelPolicy(), c.w.operator.Now()) != nil {
			continue
		}
		// A record someone wrote on the shoot is not backed by the KCP: it is kept until a person resolves it.
		if c.w.forged[s.UID] {
			continue
		}
		if pd := s.Marks.PendingDeletion; s.Marks.Managed && pd != nil && !s.Deleting() {
			return fmt.Errorf("after the drain shoot %s still waits for deletion (record %+v)", name, *pd)
		}
	}
	return nil
}

// checkBindings is invariant 10, as KEB reads the labels (KEB:internal/subscriptions/label_selector.go): a binding
// is claimable by a NEW global account with !dirty,!tenantName (shared!=true), and selected for its own account's
// next runtime with tenantName=<GA>,!dirty. The second is wanted while a sibling of the account lives; the first
// must never happen to a binding a shoot names. So, after every step:
//
//   - no binding any shoot names is claimable by another account (the operator never touches tenantName);
//   - while the hold of a deletion the operator released runs (garden time before its mark plus
//     deletion.Policy.BindingHold) and its runtime is not being brought back, the binding is dirty="true": KEB's
//     deprovisioning step of that deletion may still be about to run and must finish at once. A restore of a
//     sibling's deletion included (it keeps the label while another deletion's hold runs);
//   - after the hold, a binding the operator released for a waiting shoot (not given back: Returned) is still
//     dirty="true" unless a shoot that waits for no deletion names it (liveUserOf): the label only comes off to
//     give the binding back to a live sibling of the account. Shoots waiting for deletion are no such sibling: the
//     last of them keeps the label, for the cleanup job once its shoot is gone.
func (w *world) checkBindings() error {
	ctx := contextFor()
	now := w.truth.Now()
	hold := modelPolicy().BindingHold()
	for _, name := range w.garden.Shoots() {
		s, _ := w.garden.Get(ctx, name, ports.ReadLive)
		if !s.Exists {
			continue
		}
		if b := modelBinding(name); claimableByAnotherAccount(w.bindings.Labels(b)) {
			return fmt.Errorf("binding %s is claimable by another global account while shoot %s names it: %v", b, name, w.bindings.Labels(b))
		}
		pd := s.Marks.PendingDeletion
		if pd == nil || !s.Marks.Managed {
			continue
		}
		rec, found, _ := w.records.Get(ctx, modelNamespace, name, ports.ReadLive)
		// Returned and Kept are what a release becomes at the end of the hold: a deletion recorded so within its
		// hold is a hold that ended early.
		released := rec.BindingRelease == deletion.BindingReleased || rec.BindingRelease == deletion.BindingReturned ||
			rec.BindingRelease == deletion.BindingKept
		if !found || rec.ShootUID != s.UID || !released {
			continue
		}
		if _, back := w.runtimes[rec.RuntimeID]; back {
			continue
		}
		l := w.bindings.Labels(rec.CredentialsBinding)
		if now.Before(rec.MarkedAt.Add(hold)) && l["dirty"] != "true" {
			return fmt.Errorf("binding %s of shoot %s is %v within the hold (released at %s): KEB's step of the deletion would wait",
				rec.CredentialsBinding, name, l, rec.MarkedAt.Format(time.RFC3339))
		}
		if rec.BindingRelease != deletion.BindingReturned && l["dirty"] != "true" && !w.liveUserOf(rec.CredentialsBinding, name) {
			return fmt.Errorf("binding %s of shoot %s (released by the operator, no shoot waiting for no deletion names it) is %v; want dirty",
				rec.CredentialsBinding, name, l)
		}
	}
	return nil
}

// liveUserOf tells whether a shoot other than except that waits for no deletion (no deletion mark, or one the
// KCP does not back, or its runtime is back in the KCP; not being deleted) names binding: a cluster of the tenant the binding may be given back to. Read without injected faults.
func (w *world) liveUserOf(binding, except string) bool {
	ctx := contextFor()
	faults := w.faults
	w.faults = false
	defer func() { w.faults = faults }()
	users, err := w.bindings.UsedBy(ctx, binding, except)
	if err != nil {
		panic(err)
	}
	for _, u := range users {
		s, _ := w.garden.Get(ctx, u, ports.ReadLive)
		if !s.Exists || s.Deleting() {
			continue
		}
		pd := s.Marks.PendingDeletion
		if pd == nil {
			return true
		}
		if _, back := w.runtimes[pd.RuntimeID]; back {
			return true // being taken back: the restore removes the mark after the label
		}
		if rec, found, _ := w.records.Get(ctx, modelNamespace, u, ports.ReadLive); !found || rec.ShootUID != s.UID {
			return true // a mark the KCP does not back (someone wrote it): no deletion the operator carries out
		}
	}
	return false
}
