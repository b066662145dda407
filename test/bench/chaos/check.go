package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// The invariants, as named in the report.
const (
	invReady      = "every live Runtime Ready with a kubeconfig that parses and names its shoot"
	invOneShoot   = "exactly one shoot per live Runtime, with the Runtime's workers"
	invNoOrphan   = "no managed shoot without a Runtime and without a deletion record"
	invWindow     = "no shoot deleted before its window or while its Runtime exists"
	invEmptyRead  = "no kubeconfig Secret read empty"
	invQPS        = "Gardener request rate within the client's QPS and burst"
	invHealth     = "kim_gardener_health showed the faults while they lasted, and healthy after"
	secretsPrefix = "kubeconfig-"
)

// invariants lists every invariant in report order.
var invariants = []string{invReady, invOneShoot, invNoOrphan, invWindow, invEmptyRead, invQPS, invHealth}

// world is what the API servers (and the harness's own observers) show at the end: plain data, so the checker can
// be fed broken worlds in unit tests.
type world struct {
	Runtimes []liveRuntime
	// Secrets are the kubeconfig Secrets of the KCP by name.
	Secrets map[string]secret
	Shoots  []shoot
	// Deletions are the shoot deletions the gardenlet saw.
	Deletions []shootDeletion
	// History is what the workload did to Runtimes, in order.
	History []runtimeEvent
	// BadReads are the reads of the concurrent Secret reader that found a Secret without a usable kubeconfig.
	BadReads []string
	// Rates are the Gardener requests of each replica (one without leader election).
	Rates  []rates
	Limits limits
	// Grace is the deletion window of every plan.
	Grace time.Duration
	// FaultsInjected counts the faults while they were on; HealthErrorSeen whether a scrape during that time
	// showed kim_gardener_health in status error; HealthyAtEnd whether it said healthy after the faults.
	FaultsInjected  int
	HealthErrorSeen bool
	HealthyAtEnd    bool

	// With several replicas (Replicated): the leader election's timing, the Lease's versions, the replicas'
	// writes and processes, and the faults done to the leader (check_replicas.go).
	Replicated bool
	Lease      leaseTiming
	Leases     []leaseRecord
	Writes     []replicaWrite
	Procs      []replicaProc
	Faults     []leaderFault
}

// rates are the Gardener requests per second (Unix time) of one replica at its fault proxy; Starts are the seconds
// its manager processes started in (each starts with a full burst).
type rates struct {
	Replica   string
	PerSecond map[int64]int
	Starts    []int64
}

// limits is the manager's Gardener client configuration.
type limits struct {
	QPS            float64
	Burst          int
	HealthInterval time.Duration
}

type liveRuntime struct {
	ID, Shoot, State string
	// WorkersMax is spec.shoot.provider.workers[0].maximum.
	WorkersMax int32
}

type secret struct {
	Kubeconfig []byte
	// ShootName is the shoot the operator says it issued the kubeconfig for.
	ShootName string
}

type shoot struct {
	Name, UID, RuntimeID string
	Managed, Deleting    bool
	// DeletionRecord is the runtime ID of the operator's deletion record ("" without one).
	DeletionRecord string
	WorkersMax     int32
}

type shootDeletion struct {
	Name, UID, RuntimeID string
	At                   time.Time
	// MarkedAt is the mark of the operator's deletion record on the shoot (zero without one): the window runs
	// from it, and it cannot be earlier than the Runtime's deletion.
	MarkedAt time.Time
}

// runtimeEvent is a create (At: when the create returned) or a delete (At: before the delete was sent) of a Runtime.
type runtimeEvent struct {
	ID      string
	Created bool
	At      time.Time
}

type violation struct{ Invariant, Detail string }

func (v violation) String() string { return v.Invariant + ": " + v.Detail }

// Tolerances of the checks: deletion timestamps have whole seconds; a create racing with a deletion decided
// just before it is not a breach.
const (
	timestampSlack = time.Second
	createRace     = 2 * time.Second
)

// check returns every broken invariant of w.
func check(w world) []violation {
	var out []violation
	out = append(out, checkReady(w)...)
	out = append(out, checkShoots(w)...)
	out = append(out, checkWindows(w)...)
	for _, r := range w.BadReads {
		out = append(out, violation{invEmptyRead, r})
	}
	out = append(out, checkQPS(w)...)
	if w.FaultsInjected > 0 && !w.HealthErrorSeen {
		out = append(out, violation{invHealth, fmt.Sprintf("%d faults injected, kim_gardener_health never showed an error", w.FaultsInjected)})
	}
	if !w.HealthyAtEnd {
		out = append(out, violation{invHealth, "kim_gardener_health not healthy after the faults"})
	}
	if w.Replicated {
		out = append(out, checkReplicas(w)...)
	}
	return out
}

func checkReady(w world) []violation {
	var out []violation
	for _, rt := range w.Runtimes {
		if rt.State != "Ready" {
			out = append(out, violation{invReady, fmt.Sprintf("runtime %s is %q", rt.ID, rt.State)})
		}
		s, ok := w.Secrets[secretsPrefix+rt.ID]
		if !ok {
			out = append(out, violation{invReady, fmt.Sprintf("runtime %s has no kubeconfig Secret", rt.ID)})
			continue
		}
		if err := kubeconfigNamesShoot(s, rt.Shoot); err != nil {
			out = append(out, violation{invReady, fmt.Sprintf("runtime %s: %v", rt.ID, err)})
		}
	}
	return out
}

// kubeconfigNamesShoot checks that the Secret's kubeconfig parses, has a current context with a server, and that
// the Secret and the kubeconfig name the shoot.
func kubeconfigNamesShoot(s secret, shootName string) error {
	if err := usableKubeconfig(s.Kubeconfig); err != nil {
		return err
	}
	if s.ShootName != shootName {
		return fmt.Errorf("kubeconfig issued for shoot %q, want %q", s.ShootName, shootName)
	}
	cfg, _ := clientcmd.Load(s.Kubeconfig)
	if !strings.Contains(cfg.CurrentContext, shootName) {
		return fmt.Errorf("kubeconfig context %q does not name shoot %q", cfg.CurrentContext, shootName)
	}
	return nil
}

// usableKubeconfig is what a reader of the Secret needs: a kubeconfig that parses, with a current context whose
// cluster has a server.
func usableKubeconfig(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("empty kubeconfig")
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("unparseable kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("kubeconfig without current context")
	}
	if c, ok := cfg.Clusters[ctx.Cluster]; !ok || c.Server == "" {
		return fmt.Errorf("kubeconfig context %q without a server", cfg.CurrentContext)
	}
	return nil
}

func checkShoots(w world) []violation {
	var out []violation
	live := map[string]liveRuntime{}
	for _, rt := range w.Runtimes {
		live[rt.ID] = rt
	}
	byRuntime := map[string][]shoot{}
	for _, s := range w.Shoots {
		if s.Managed && !s.Deleting {
			byRuntime[s.RuntimeID] = append(byRuntime[s.RuntimeID], s)
		}
		if _, ok := live[s.RuntimeID]; s.Managed && !s.Deleting && !ok && s.DeletionRecord == "" {
			out = append(out, violation{invNoOrphan, fmt.Sprintf("shoot %s (runtime %s) has neither a Runtime nor a deletion record", s.Name, s.RuntimeID)})
		}
	}
	for _, rt := range w.Runtimes {
		shoots := byRuntime[rt.ID]
		if len(shoots) != 1 {
			out = append(out, violation{invOneShoot, fmt.Sprintf("runtime %s has %d shoots", rt.ID, len(shoots))})
			continue
		}
		s := shoots[0]
		switch {
		case s.Name != rt.Shoot:
			out = append(out, violation{invOneShoot, fmt.Sprintf("runtime %s: shoot %s, want %s", rt.ID, s.Name, rt.Shoot)})
		case s.DeletionRecord != "":
			out = append(out, violation{invOneShoot, fmt.Sprintf("runtime %s: its shoot %s still carries a deletion record", rt.ID, s.Name)})
		case s.WorkersMax != rt.WorkersMax:
			out = append(out, violation{invOneShoot, fmt.Sprintf("runtime %s: shoot %s has workers maximum %d, the Runtime %d", rt.ID, s.Name, s.WorkersMax, rt.WorkersMax)})
		}
	}
	return out
}

// pendingDeletions names the managed shoots, not yet being deleted, whose Runtime is gone: deletions the run started
// that wait for their windows.
func pendingDeletions(w world) []string {
	live := map[string]bool{}
	for _, rt := range w.Runtimes {
		live[rt.ID] = true
	}
	var out []string
	for _, s := range w.Shoots {
		if s.Managed && !s.Deleting && !live[s.RuntimeID] {
			out = append(out, fmt.Sprintf("shoot %s (runtime %s)", s.Name, s.RuntimeID))
		}
	}
	return out
}

// checkWindows holds every shoot deletion against what the workload did to the shoot's Runtime: the last event
// before the deletion must be the Runtime's deletion, at least the grace window earlier; and against the shoot's
// deletion record, whose mark the window runs from (the Runtime's deletion may take the operator a while under
// faults, so the record is the tighter bound; its mark cannot predate the Runtime's deletion).
func checkWindows(w world) []violation {
	var out []violation
	events := map[string][]runtimeEvent{}
	for _, e := range w.History {
		events[e.ID] = append(events[e.ID], e)
	}
	for _, d := range w.Deletions {
		var last *runtimeEvent
		for i, e := range events[d.RuntimeID] {
			if !e.At.After(d.At.Add(timestampSlack)) {
				last = &events[d.RuntimeID][i]
			}
		}
		switch {
		case d.RuntimeID == "":
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s (%s) deleted without a runtime ID", d.Name, d.UID)})
		case last == nil:
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s deleted at %s, its runtime %s was never deleted", d.Name, stamp(d.At), d.RuntimeID)})
		case last.Created && last.At.Before(d.At.Add(-createRace)):
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s deleted at %s while runtime %s existed (created again at %s)", d.Name, stamp(d.At), d.RuntimeID, stamp(last.At))})
		case !last.Created && d.At.Before(last.At.Add(w.Grace-timestampSlack)):
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s deleted at %s, %s after runtime %s was deleted (window %s)", d.Name, stamp(d.At), d.At.Sub(last.At).Round(time.Millisecond), d.RuntimeID, w.Grace)})
		case !last.Created && d.MarkedAt.IsZero():
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s deleted at %s without a deletion record", d.Name, stamp(d.At))})
		case !last.Created && d.MarkedAt.Before(last.At.Add(-timestampSlack)):
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s: deletion record marked at %s, before runtime %s was deleted at %s", d.Name, stamp(d.MarkedAt), d.RuntimeID, stamp(last.At))})
		case !last.Created && d.At.Before(d.MarkedAt.Add(w.Grace-timestampSlack)):
			out = append(out, violation{invWindow, fmt.Sprintf("shoot %s deleted at %s, %s after its deletion record's mark (window %s)", d.Name, stamp(d.At), d.At.Sub(d.MarkedAt), w.Grace)})
		}
	}
	return out
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// checkQPS holds the request counts of every replica in every window of seconds against what the client's token
// bucket allows: QPS per second plus a full burst per manager process started in (or before) the window, plus the
// health probes, which bypass the bucket, and one second of QPS for requests delayed between the bucket and the
// proxy.
func checkQPS(w world) []violation {
	var out []violation
	for _, r := range w.Rates {
		ratio, a, b, n, allowed := qpsWorst(r, w.Limits)
		if ratio > 1 {
			who := ""
			if len(w.Rates) > 1 {
				who = "replica " + r.Replica + ": "
			}
			out = append(out, violation{invQPS, fmt.Sprintf("%s%d requests in the %d s from %s (allowed %.0f at QPS %g, burst %d)",
				who, n, b-a+1, time.Unix(a, 0).Format("15:04:05"), allowed, w.Limits.QPS, w.Limits.Burst)})
		}
	}
	return out
}

// qpsWorstOf is the highest ratio of requests to allowance of any replica.
func qpsWorstOf(w world) float64 {
	worst := 0.0
	for _, r := range w.Rates {
		ratio, _, _, _, _ := qpsWorst(r, w.Limits)
		worst = max(worst, ratio)
	}
	return worst
}

// qpsWorst finds the window of seconds with the highest ratio of requests to allowance.
func qpsWorst(w rates, lim limits) (ratio float64, from, to int64, requests int, allowed float64) {
	if len(w.PerSecond) == 0 {
		return 0, 0, 0, 0, 0
	}
	secs := make([]int64, 0, len(w.PerSecond))
	for s := range w.PerSecond {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	starts := slices.Sorted(slices.Values(w.Starts))
	first, last := secs[0], secs[len(secs)-1]
	counts := make([]int, last-first+2) // prefix sums
	for s := first; s <= last; s++ {
		counts[s-first+1] = counts[s-first] + w.PerSecond[s]
	}
	probeEvery := lim.HealthInterval.Seconds()
	for a := first; a <= last; a++ {
		// A process started in the window brings a full bucket; whatever ran before holds at most one (the 1 below).
		for b := a; b <= last; b++ {
			n := counts[b-first+1] - counts[a-first]
			length := float64(b - a + 1)
			refills := 0
			for _, s := range starts {
				if s >= a && s <= b {
					refills++
				}
			}
			probes := float64(1 + refills)
			if probeEvery > 0 {
				probes += length / probeEvery
			}
			allow := lim.QPS*(length+1) + float64(lim.Burst*(1+refills)) + probes
			if r := float64(n) / allow; r > ratio {
				ratio, from, to, requests, allowed = r, a, b, n, allow
			}
		}
	}
	return ratio, from, to, requests, allowed
}
