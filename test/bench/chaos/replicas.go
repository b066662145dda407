package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// leaseName is the manager's leader election ID (operator/app), the name of its Lease in the first watched
// namespace.
const leaseName = "kim.infrastructuremanager.kyma-project.io"

// shippedLease is the manager's leader election timing (operator/app); the Lease shows the duration (the report
// prints it, the short test compares it), the renew deadline and retry period are the client's own.
var shippedLease = leaseTiming{Duration: app.LeaseDuration, RenewDeadline: app.RenewDeadline, RetryPeriod: app.RetryPeriod}

// replica is one replica of the manager's Deployment: its directory of kubeconfigs, its own fault proxies in front
// of the garden and (with several replicas) the KCP, whose audits say what it wrote, and its processes.
type replica struct {
	name, dir   string
	garden, kcp *faultproxy.Proxy
	mu          sync.Mutex
	procs       []*harness.Manager
	begun       []int64
	held        bool // not started again while set: partitioned, or killed until the standby took over
	killed      map[*harness.Manager]bool
	lostLease   int // processes that exited because they lost the lease
	crashed     []string
}

func (rp *replica) current() *harness.Manager {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if len(rp.procs) == 0 {
		return nil
	}
	return rp.procs[len(rp.procs)-1]
}

func (rp *replica) setHeld(h bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.held = h
}

func (rp *replica) start(ctx context.Context, bin string, args []string) error {
	rp.mu.Lock()
	n := len(rp.procs) + 1
	rp.begun = append(rp.begun, time.Now().Unix())
	rp.mu.Unlock()
	m, err := harness.StartReplica(ctx, bin, rp.dir, filepath.Join(rp.dir, fmt.Sprintf("manager-%d.log", n)), args)
	if err != nil {
		return fmt.Errorf("replica %s: %w", rp.name, err)
	}
	rp.mu.Lock()
	rp.procs = append(rp.procs, m)
	rp.mu.Unlock()
	return nil
}

func (rp *replica) startSeconds() []int64 {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return slices.Clone(rp.begun)
}

// isLeaseWrite selects the requests whose body the KCP proxies keep: the Lease's, which name their writer.
func isLeaseWrite(r *http.Request) bool { return strings.Contains(r.URL.Path, "/leases/") }

// replicaSet runs several replicas with leader election, like the Deployment: a supervisor starts every replica
// whose process ended again (a pod's restart), and the fault loop SIGKILLs the leader or partitions it from the
// KCP at random moments and measures the take-over.
type replicaSet struct {
	c     config
	args  []string
	reps  []*replica
	rnd   *rand.Rand
	env   *gardenbox.Env
	lease *leaseWatch

	mu       sync.Mutex
	faults   []leaderFault
	err      error
	observed bool // the in-flight measurements end
	stopFn   context.CancelFunc
	bg       sync.WaitGroup
}

func newReplicaSet(c config, args []string, reps []*replica, env *gardenbox.Env) (*replicaSet, error) {
	cs, err := kubernetes.NewForConfig(env.KCP)
	if err != nil {
		return nil, err
	}
	return &replicaSet{c: c, args: args, reps: reps, env: env, rnd: rand.New(rand.NewPCG(c.seed, 1)),
		lease: &leaseWatch{leases: cs.CoordinationV1().Leases(keb.Namespace)}}, nil
}

// start starts the Lease watch and every replica, waits until one holds the lease and then supervises them.
func (rs *replicaSet) start(ctx context.Context) error {
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rs.stopFn = cancel
	rs.bg.Go(func() { rs.lease.run(bg) })
	for _, rp := range rs.reps {
		if err := rp.start(ctx, rs.c.managerBin, rs.args); err != nil {
			return err
		}
	}
	if _, _, err := rs.steady(ctx, 2*time.Minute); err != nil {
		return fmt.Errorf("no leader after the start: %w", err)
	}
	rs.bg.Go(func() { rs.supervise(bg) })
	return nil
}

// stop ends the supervisor, the Lease watch and every replica (standbys first, so no take-over starts).
func (rs *replicaSet) stop() {
	rs.stopObserving()
	if rs.stopFn != nil {
		rs.stopFn()
	}
	rs.bg.Wait()
	leader, _, _ := rs.leader()
	for _, rp := range rs.reps {
		if rp != leader {
			if m := rp.current(); m != nil {
				m.Stop()
			}
		}
	}
	if leader != nil {
		if m := leader.current(); m != nil {
			m.Stop()
		}
	}
}

// running are the replicas' processes that run now.
func (rs *replicaSet) running() []*harness.Manager {
	var out []*harness.Manager
	for _, rp := range rs.reps {
		if m := rp.current(); m != nil && !m.Exited() {
			out = append(out, m)
		}
	}
	return out
}

func (rs *replicaSet) fail(err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.err == nil {
		rs.err = err
	}
}

func (rs *replicaSet) failure() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.err
}

// supervise starts every replica whose process ended and that is not held again. A process may end only because it
// lost the lease (its log says so); any other end is a crash and fails the run.
func (rs *replicaSet) supervise(ctx context.Context) {
	for ctx.Err() == nil {
		for _, rp := range rs.reps {
			m := rp.current()
			rp.mu.Lock()
			held := rp.held
			rp.mu.Unlock()
			if m == nil || !m.Exited() || held || ctx.Err() != nil {
				continue
			}
			rs.noteExit(rp, m)
			if err := rp.start(ctx, rs.c.managerBin, rs.args); err != nil && ctx.Err() == nil {
				rs.fail(err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// noteExit classifies the end of a process that was not SIGKILLed by the harness.
func (rs *replicaSet) noteExit(rp *replica, m *harness.Manager) {
	log, _ := os.ReadFile(m.LogPath())
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.killed[m] {
		return
	}
	if bytes.Contains(log, []byte("leader election lost")) {
		rp.lostLease++
		harness.Logf("replica %s: pid %d exited after losing the lease (%v)", rp.name, m.PID(), m.ExitErr())
		return
	}
	rp.crashed = append(rp.crashed, m.LogPath())
	rs.fail(fmt.Errorf("replica %s: pid %d exited by itself (%w), not for a lost lease (log: %s)", rp.name, m.PID(), m.ExitErr(), m.LogPath()))
}

// identify finds the replica and process whose Lease writes carry identity (a leader election identity is the
// host name and a random UUID, written into every Lease the process writes).
func (rs *replicaSet) identify(identity string) (*replica, *harness.Manager) {
	if identity == "" {
		return nil, nil
	}
	for _, rp := range rs.reps {
		for _, w := range rp.kcp.Writes() {
			if !bytes.Contains(w.Body, []byte(identity)) {
				continue
			}
			rp.mu.Lock()
			procs := slices.Clone(rp.procs)
			rp.mu.Unlock()
			for _, m := range procs {
				if end := m.Ended(); !m.Started().After(w.At) && (end.IsZero() || !end.Before(w.At)) {
					return rp, m
				}
			}
			return rp, nil
		}
	}
	return nil, nil
}

// leader is the replica whose running process holds the lease now, with its identity.
func (rs *replicaSet) leader() (*replica, string, bool) {
	l, ok := rs.lease.latest()
	if !ok || l.Holder == "" {
		return nil, "", false
	}
	rp, m := rs.identify(l.Holder)
	if rp == nil || m == nil || m.Exited() {
		return nil, l.Holder, false
	}
	return rp, l.Holder, true
}

// steady waits until a running process holds a fresh lease and every other replica runs (its standby is ready).
func (rs *replicaSet) steady(ctx context.Context, timeout time.Duration) (*replica, string, error) {
	deadline := time.Now().Add(timeout)
	for {
		leader, holder, ok := rs.leader()
		l, _ := rs.lease.latest()
		seen := fmt.Sprintf("holder %q", holder)
		if ok && time.Since(l.Renew) < shippedLease.Duration {
			standbys := 0
			for _, rp := range rs.reps {
				rp.mu.Lock()
				held := rp.held
				rp.mu.Unlock()
				if m := rp.current(); rp != leader && !held && m != nil && !m.Exited() {
					standbys++
				}
			}
			if standbys == len(rs.reps)-1 {
				return leader, holder, nil
			}
			seen += fmt.Sprintf(", %d of %d standbys running", standbys, len(rs.reps)-1)
		}
		if err := rs.failure(); err != nil {
			return nil, "", err
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("no steady leader within %s: %s", timeout, seen)
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// isPartition spreads the partitions evenly over the faults: fault i (from 0) is one when the running count of
// partitions, share × (i+1), steps up.
func isPartition(i int, share float64) bool {
	return int(share*float64(i+1)) > int(share*float64(i))
}

// faultLoop does one leader fault after another: the first right after the Runtimes were created (they are in
// flight), the next ones kill-min..kill-max after the previous take-over, until phase ends or the faults are done.
// A fault under way is finished (take-over, partition healed) whatever phase says.
func (rs *replicaSet) faultLoop(phase context.Context, created <-chan struct{}) {
	ctx := context.WithoutCancel(phase)
	for i := 0; rs.c.kills == 0 || i < rs.c.kills; i++ {
		wait := rs.c.killMin + time.Duration(rs.rnd.Int64N(int64(rs.c.killMax-rs.c.killMin)+1))
		if i == 0 {
			select {
			case <-phase.Done():
				return
			case <-created:
			}
			wait = time.Duration(rs.rnd.Int64N(int64(2 * time.Second)))
		}
		select {
		case <-phase.Done():
			return
		case <-time.After(wait):
		}
		leader, holder, err := rs.steady(phase, shippedLease.takeoverBound())
		if err != nil {
			if phase.Err() == nil {
				rs.fail(fmt.Errorf("before leader fault %d: %w", i+1, err))
			}
			return
		}
		kind := "kill"
		if isPartition(i, rs.c.partitionShare) {
			kind = "partition"
		}
		inFlight := rs.notReady(ctx)
		f := leaderFault{Kind: kind, Replica: leader.name, Holder: holder, InFlight: len(inFlight)}
		leader.setHeld(true)
		m := leader.current()
		f.At = time.Now()
		if kind == "kill" {
			leader.mu.Lock()
			if leader.killed == nil {
				leader.killed = map[*harness.Manager]bool{}
			}
			leader.killed[m] = true
			leader.mu.Unlock()
			m.Kill()
		} else {
			leader.kcp.Partition(true)
		}
		f.NewHolder, f.TakenOver = rs.lease.waitOther(ctx, holder, shippedLease.takeoverBound())
		if kind == "partition" {
			time.Sleep(time.Until(f.At.Add(rs.c.partitionFor)))
			leader.kcp.Partition(false)
			f.PartitionEnded = time.Now()
		}
		leader.setHeld(false)
		newLeader, _ := rs.identify(f.NewHolder)
		harness.Logf("leader fault %d: %s of replica %s (pid %d) at %s; %s", i+1, kind, leader.name, m.PID(), stamp(f.At), describeTakeover(f, newLeader))
		rs.mu.Lock()
		idx := len(rs.faults)
		rs.faults = append(rs.faults, f)
		rs.mu.Unlock()
		rs.bg.Go(func() { rs.track(idx, f.At, inFlight) })
		if f.TakenOver.IsZero() {
			return // the invariant is broken; the check reports it
		}
	}
}

func describeTakeover(f leaderFault, by *replica) string {
	if f.TakenOver.IsZero() {
		return "no take-over"
	}
	name := "?"
	if by != nil {
		name = by.name
	}
	return fmt.Sprintf("replica %s took over after %s, %d Runtimes in flight", name, f.TakenOver.Sub(f.At).Round(time.Millisecond), f.InFlight)
}

func (rs *replicaSet) faultCount() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.faults)
}

// notReady are the live Runtimes that are not Ready now.
func (rs *replicaSet) notReady(ctx context.Context) []string {
	var list imv1.RuntimeList
	if err := rs.env.KCPClient.List(ctx, &list, client.InNamespace(keb.Namespace)); err != nil {
		return nil
	}
	var out []string
	for _, rt := range list.Items {
		if rt.DeletionTimestamp == nil && rt.Status.State != imv1.RuntimeStateReady {
			out = append(out, rt.Name)
		}
	}
	return out
}

// track measures the time from a fault to Ready of the Runtimes that were in flight at it (Runtimes deleted in the
// meantime drop out), until every one is Ready or the background work stops (after convergence).
func (rs *replicaSet) track(idx int, at time.Time, names []string) {
	pending := map[string]bool{}
	for _, n := range names {
		pending[n] = true
	}
	bg := context.Background()
	for len(pending) > 0 && !rs.stopped() {
		var list imv1.RuntimeList
		if err := rs.env.KCPClient.List(bg, &list, client.InNamespace(keb.Namespace)); err == nil {
			now := time.Now()
			live := map[string]imv1.Runtime{}
			for _, rt := range list.Items {
				live[rt.Name] = rt
			}
			for n := range pending {
				rt, ok := live[n]
				switch {
				case !ok || rt.DeletionTimestamp != nil:
					delete(pending, n)
				case rt.Status.State == imv1.RuntimeStateReady:
					delete(pending, n)
					rs.mu.Lock()
					rs.faults[idx].ToReady = append(rs.faults[idx].ToReady, now.Sub(at))
					rs.faults[idx].Settled++
					rs.mu.Unlock()
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// stopObserving ends the in-flight measurements (after convergence).
func (rs *replicaSet) stopObserving() {
	rs.mu.Lock()
	rs.observed = true
	rs.mu.Unlock()
}

func (rs *replicaSet) stopped() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.observed
}

// fill puts what the replicas did into w: the Lease's versions, every write the replicas' proxies forwarded, the
// processes with their identities, the leader faults and the Gardener rates per replica.
func (rs *replicaSet) fill(w *world) {
	w.Replicated, w.Lease = true, shippedLease
	w.Leases = rs.lease.records()
	identities := map[*harness.Manager]string{}
	for _, l := range w.Leases {
		if _, m := rs.identify(l.Holder); m != nil {
			identities[m] = l.Holder
		}
	}
	for _, rp := range rs.reps {
		for target, p := range map[string]*faultproxy.Proxy{"kcp": rp.kcp, "garden": rp.garden} {
			for _, wr := range p.Writes() {
				if wr.Forwarded {
					w.Writes = append(w.Writes, replicaWrite{Replica: rp.name, Target: target, At: wr.At, Method: wr.Method, Path: wr.Path, Code: wr.Code})
				}
			}
		}
	}
	sort.SliceStable(w.Writes, func(i, j int) bool { return w.Writes[i].At.Before(w.Writes[j].At) })
	for _, rp := range rs.reps {
		rp.mu.Lock()
		for _, m := range rp.procs {
			w.Procs = append(w.Procs, replicaProc{Replica: rp.name, Identity: identities[m], Started: m.Started(), Ended: m.Ended()})
		}
		rp.mu.Unlock()
	}
	rs.mu.Lock()
	w.Faults = slices.Clone(rs.faults)
	rs.mu.Unlock()
}

// leaseWatch follows the leader Lease on the KCP's API server (an admin client, not through a replica's proxy) and
// keeps every version of it.
type leaseWatch struct {
	leases coordinationv1client.LeaseInterface

	mu       sync.Mutex
	versions []leaseRecord
	seen     map[string]bool
	// durations are the lease durations the Lease said (spec.leaseDurationSeconds).
	durations map[time.Duration]bool
}

// run watches until ctx ends; a watch that ends is started again (it begins with the Lease as it is, so nothing
// between two watches but intermediate renewals is missed).
func (l *leaseWatch) run(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := l.leases.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + leaseName})
		if err == nil {
			for ev := range w.ResultChan() {
				if lease, ok := ev.Object.(*coordinationv1.Lease); ok {
					l.add(lease)
				}
			}
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *leaseWatch) add(lease *coordinationv1.Lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen, l.durations = map[string]bool{}, map[time.Duration]bool{}
	}
	if l.seen[lease.ResourceVersion] {
		return
	}
	l.seen[lease.ResourceVersion] = true
	var r leaseRecord
	if h := lease.Spec.HolderIdentity; h != nil {
		r.Holder = *h
	}
	if a := lease.Spec.AcquireTime; a != nil {
		r.Acquire = a.Time
	}
	if t := lease.Spec.RenewTime; t != nil {
		r.Renew = t.Time
	}
	if d := lease.Spec.LeaseDurationSeconds; d != nil && r.Holder != "" {
		r.Duration = time.Duration(*d) * time.Second
		l.durations[r.Duration] = true
	}
	l.versions = append(l.versions, r)
}

func (l *leaseWatch) records() []leaseRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.versions)
}

// leaseDurations are the durations the holders wrote into the Lease.
func (l *leaseWatch) leaseDurations() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for d := range l.durations {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// latest is the Lease's most recent version (by renew time).
func (l *leaseWatch) latest() (leaseRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out leaseRecord
	for _, r := range l.versions {
		if !r.Renew.Before(out.Renew) {
			out = r
		}
	}
	return out, len(l.versions) > 0
}

// waitOther waits until a holder other than old (and not empty) has the lease and returns it with its acquire time
// (zero when none came within timeout).
func (l *leaseWatch) waitOther(ctx context.Context, old string, timeout time.Duration) (string, time.Time) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if r, ok := l.latest(); ok && r.Holder != "" && r.Holder != old {
			return r.Holder, r.Acquire
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", time.Time{}
}
