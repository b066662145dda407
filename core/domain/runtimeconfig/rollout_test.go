package runtimeconfig

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const setH = "h-new-set"

// fleetOf returns n runtimes that were Ready once and last tried another set, with their wave (share 0.1).
func fleetOf(n int) []RolloutMember {
	out := make([]RolloutMember, n)
	for i := range out {
		out[i] = RolloutMember{RuntimeID: fmt.Sprintf("rt-%04d", i), Record: BootstrapRecord{Hash: "h-old-set"}}
	}
	return out
}

func waveOf(m RolloutMember) int { return RolloutPosition(setH, m.RuntimeID)/1000 + 1 }

// tryWaves records the set as tried by every runtime of the waves up to w; fail decides which fail it.
func tryWaves(fleet []RolloutMember, w int, fail func(i int) bool) {
	for i := range fleet {
		if waveOf(fleet[i]) <= w {
			fleet[i].Record = BootstrapRecord{Hash: setH, Failed: fail != nil && fail(i)}
		}
	}
}

func TestPlanRollout(t *testing.T) {
	tenth := RolloutPolicy{Share: 0.1, MaxFailures: 0.05}
	type want struct {
		wave, waves int
		stopped     bool
	}
	cases := []struct {
		reason string
		policy RolloutPolicy
		fleet  func() []RolloutMember
		want   want
		// admits says which runtime must be admitted (checked for every runtime of the fleet).
		admits func(m RolloutMember) bool
	}{
		{reason: "nothing tried yet: wave 1 admits exactly the positions below a tenth",
			policy: tenth, fleet: func() []RolloutMember { return fleetOf(1000) }, want: want{1, 10, false},
			admits: func(m RolloutMember) bool { return waveOf(m) == 1 }},
		{reason: "one runtime of wave 1 that has not tried holds wave 2 back",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				tryWaves(f, 1, nil)
				for i := range f {
					if waveOf(f[i]) == 1 {
						f[i].Record = BootstrapRecord{Hash: "h-old-set"}
						break
					}
				}
				return f
			}, want: want{1, 10, false},
			admits: func(m RolloutMember) bool { return waveOf(m) == 1 }},
		{reason: "every runtime of waves 1-3 tried (a few failed, within the threshold): wave 4 is admitted",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				tryWaves(f, 3, func(i int) bool { return i%50 == 0 })
				return f
			},
			want: want{4, 10, false}, admits: func(m RolloutMember) bool { return waveOf(m) <= 4 }},
		{reason: "more failures than tolerated: stopped; no runtime that has not tried is given the set, those that tried retry",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				tryWaves(f, 2, func(i int) bool { return i%10 == 0 })
				return f
			},
			want:   want{2, 10, true},
			admits: func(m RolloutMember) bool { return waveOf(m) <= 2 }},
		{reason: "the stop is found while the wave is still going: the rest of the wave is held too",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				n := 0
				for i := range f {
					if waveOf(f[i]) == 1 && n < 3 {
						f[i].Record, n = BootstrapRecord{Hash: setH, Failed: true}, n+1
					}
				}
				return f
			}, want: want{1, 10, true},
			admits: func(m RolloutMember) bool { return m.Record.Hash == setH }},
		{reason: "new runtimes are always admitted and no wave waits for them",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				tryWaves(f, 1, nil)
				for i := range f {
					if i%7 == 0 && f[i].Record.Hash != setH {
						f[i].New = true // in every wave, wave 1 included, none has tried
					}
				}
				return f
			}, want: want{2, 10, false},
			admits: func(m RolloutMember) bool { return m.New || waveOf(m) <= 2 }},
		{reason: "hibernated or deleted runtimes hold no wave back, and are admitted with their wave (a woken one gets the set)",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				tryWaves(f, 2, nil)
				for i := range f {
					if waveOf(f[i]) <= 2 && i%5 == 0 {
						f[i].Record, f[i].Paused = BootstrapRecord{Hash: "h-old-set"}, true
					}
				}
				return f
			}, want: want{3, 10, false},
			admits: func(m RolloutMember) bool { return waveOf(m) <= 3 }},
		{reason: "another set recorded is not this one: every runtime waits for its wave again",
			policy: tenth, fleet: func() []RolloutMember {
				f := fleetOf(1000)
				for i := range f {
					f[i].Record = BootstrapRecord{Hash: "h-third-set"}
				}
				return f
			}, want: want{1, 10, false},
			admits: func(m RolloutMember) bool { return waveOf(m) == 1 }},
		{reason: "share 1: every runtime at once, never stopped, even when all failed (the behaviour before waves)",
			policy: RolloutPolicy{Share: 1}, fleet: func() []RolloutMember {
				f := fleetOf(200)
				for i := range f[:100] {
					f[i].Record = BootstrapRecord{Hash: setH, Failed: true}
				}
				return f
			}, want: want{1, 1, false}, admits: func(RolloutMember) bool { return true }},
		{reason: "no policy (the zero value): every runtime at once",
			fleet: func() []RolloutMember { return fleetOf(100) }, want: want{1, 1, false}, admits: func(RolloutMember) bool { return true }},
		{reason: "an empty fleet: the last wave, nothing to wait for",
			policy: tenth, fleet: func() []RolloutMember { return nil }, want: want{10, 10, false}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			fleet := tc.fleet()
			r := PlanRollout(setH, tc.policy, fleet)
			if got := (want{r.Wave, r.Waves, r.Stopped}); got != tc.want {
				t.Fatalf("wave %d of %d, stopped %v (tried %d, failed %d, tolerated %d); want %+v", r.Wave, r.Waves, r.Stopped,
					r.Tried, r.Failed, r.Tolerated, tc.want)
			}
			for _, m := range fleet {
				if got, want := r.Admits(m), tc.admits(m); got != want {
					t.Fatalf("%s (wave %d, record %+v, new %v): admitted %v, want %v", m.RuntimeID, waveOf(m), m.Record, m.New, got, want)
				}
			}
			// A restart (or another replica) derives the same rollout from the same records, in whatever order the
			// cache lists them.
			shuffled := append([]RolloutMember(nil), fleet...)
			rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if diff := cmp.Diff(r, PlanRollout(setH, tc.policy, shuffled), cmp.AllowUnexported(Rollout{})); diff != "" {
				t.Errorf("the same records listed in another order give another rollout (-first +again):\n%s", diff)
			}
		})
	}
}

// TestRolloutTolerance: the threshold is a share of the runtimes that tried the set, at least one failure.
func TestRolloutTolerance(t *testing.T) {
	for _, tc := range []struct {
		reason        string
		tried, failed int
		maxFailures   float64
		wantTolerated int
		wantStopped   bool
	}{
		{"5 % of 100: five failures go on", 100, 5, 0.05, 5, false},
		{"5 % of 100: the sixth stops", 100, 6, 0.05, 5, true},
		{"one failure is always tolerated, also with maxFailures 0", 10, 1, 0, 1, false},
		{"the second stops with maxFailures 0", 10, 2, 0, 1, true},
		{"maxFailures 1 never stops", 10, 10, 1, 10, false},
	} {
		fleet := fleetOf(tc.tried + 1000)
		for i := range fleet[:tc.tried] {
			fleet[i].Record = BootstrapRecord{Hash: setH, Failed: i < tc.failed}
		}
		r := PlanRollout(setH, RolloutPolicy{Share: 0.1, MaxFailures: tc.maxFailures}, fleet)
		if r.Tolerated != tc.wantTolerated || r.Stopped != tc.wantStopped || r.Failed != tc.failed || r.Tried != tc.tried {
			t.Errorf("%s: tried %d, failed %d, tolerated %d, stopped %v", tc.reason, r.Tried, r.Failed, r.Tolerated, r.Stopped)
		}
	}
}

// TestRolloutOrdersEveryChangeAnew: positions spread over the fleet and differ per set, so no runtime is always
// among the first.
func TestRolloutOrdersEveryChangeAnew(t *testing.T) {
	fleet := fleetOf(5000)
	first, both := 0, 0
	for _, m := range fleet {
		a, b := RolloutPosition("h-one", m.RuntimeID) < 1000, RolloutPosition("h-two", m.RuntimeID) < 1000
		if a {
			first++
		}
		if a && b {
			both++
		}
	}
	if first < 400 || first > 600 {
		t.Errorf("%d of 5,000 runtimes in the first tenth; want about 500", first)
	}
	if both > 150 {
		t.Errorf("%d runtimes are in the first wave of two different sets; want about 50 (independent orders)", both)
	}
}

func TestRolloutHold(t *testing.T) {
	fleet := fleetOf(1000)
	var late RolloutMember
	for _, m := range fleet {
		if waveOf(m) == 7 {
			late = m
			break
		}
	}
	r := PlanRollout(setH, RolloutPolicy{Share: 0.1, MaxFailures: 0.05}, fleet)
	held := r.Hold(late)
	if held.Reason != ReasonBootstrapWaitingForWave || held.Done || !strings.Contains(held.Message, "wave 7 of 10") {
		t.Errorf("held runtime reports %+v; want %s naming its wave 7 of 10", held, ReasonBootstrapWaitingForWave)
	}
	tryWaves(fleet, 1, func(int) bool { return true })
	stopped := PlanRollout(setH, RolloutPolicy{Share: 0.1, MaxFailures: 0.05}, fleet).Hold(late)
	if !strings.Contains(stopped.Message, "stopped in wave 1 of 10") || !strings.Contains(stopped.Message, "maxFailures") {
		t.Errorf("held runtime of a stopped rollout reports %q; want the stop named", stopped.Message)
	}
	// The message does not follow the current wave: a held runtime is not written again while earlier waves pass.
	tryWaves(fleet, 3, nil)
	if again := PlanRollout(setH, RolloutPolicy{Share: 0.1, MaxFailures: 0.05}, fleet).Hold(late); again != held {
		t.Errorf("the message changed with the wave: %q -> %q", held.Message, again.Message)
	}
}

func TestRecordBootstrap(t *testing.T) {
	prev := BootstrapRecord{Hash: "h-old"}
	for _, tc := range []struct {
		reason  string
		applied string
		outcome Outcome
		want    BootstrapRecord
	}{
		{"completed: reached", "h1", Done(ReasonBootstrapCompleted, ""), BootstrapRecord{Hash: "h1"}},
		{"failed on the way", "h1", Failed(ReasonBootstrapFailed, ""), BootstrapRecord{Hash: "h1", Failed: true}},
		{"an object refused", "h1", Failed(ReasonBootstrapObjectRefused, ""), BootstrapRecord{Hash: "h1", Failed: true}},
		{"the pull secret refused", "h1", Failed(ReasonBootstrapPullSecretRefused, ""), BootstrapRecord{Hash: "h1", Failed: true}},
		{"invalid manifests", "h1", Failed(ReasonBootstrapManifestsInvalid, ""), BootstrapRecord{Hash: "h1", Failed: true}},
		{"the runtime stopped answering", "h1", Failed(ReasonRuntimeAPIServerUnreachable, ""), BootstrapRecord{Hash: "h1", Failed: true}},
		{"Deployments not available yet: nothing new, the wave waits", "h1", Failed(ReasonBootstrapInProgress, ""), prev},
		{"held: nothing attempted", "", Failed(ReasonBootstrapWaitingForWave, ""), prev},
		{"no set configured", "", Outcome{}, prev},
	} {
		if got := RecordBootstrap(prev, tc.applied, tc.outcome); got != tc.want {
			t.Errorf("%s: recorded %+v, want %+v", tc.reason, got, tc.want)
		}
	}
}

func TestContentHashFollowsTheSet(t *testing.T) {
	base := func() *Bootstrap {
		return &Bootstrap{Source: "kcp-system/kim-bootstrap", Objects: []BootstrapObject{{APIVersion: "v1", Kind: "ConfigMap", Name: "a",
			JSON: []byte(`{"data":{"k":"v"}}`)}}, Allowed: []BootstrapKind{{Group: "apps", Kind: "Deployment", Namespace: "kyma-system"}},
			PullSecret: &PullSecret{Name: "pull", Type: "kubernetes.io/dockerconfigjson", Data: map[string][]byte{".dockerconfigjson": []byte("x"), "b": []byte("y")}}}
	}
	if one, other := base(), base(); (*Bootstrap)(nil).ContentHash() != "" || one.ContentHash() == "" || one.ContentHash() != other.ContentHash() {
		t.Fatal("equal sets must hash equally, none to the empty hash")
	}
	for name, change := range map[string]func(*Bootstrap){
		"an object's content":  func(b *Bootstrap) { b.Objects[0].JSON = []byte(`{"data":{"k":"w"}}`) },
		"another object":       func(b *Bootstrap) { b.Objects = append(b.Objects, BootstrapObject{Kind: "ConfigMap", Name: "b"}) },
		"the pull secret data": func(b *Bootstrap) { b.PullSecret.Data[".dockerconfigjson"] = []byte("z") },
		"no pull secret":       func(b *Bootstrap) { b.PullSecret = nil },
		"allowed kinds":        func(b *Bootstrap) { b.Allowed = nil },
		"a problem":            func(b *Bootstrap) { b.Problem = "document 2 is not YAML" },
	} {
		b := base()
		change(b)
		if b.ContentHash() == base().ContentHash() {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// TestHoldingKeepsTheDesiredHash: the desired state of a held runtime hashes as the one it reached with the set it
// keeps (holding alone configures nothing again), the admitted one differs (admission configures it), and without
// bootstrap manifests the hash is the one earlier versions recorded (an upgrade configures no runtime again).
// The pinned value is that of the state since issue 26 item 5, whose provisioning info carries the previous manager's
// keys instanceID and infrastructureConfig (a deliberate, one-time rewrite); the rollout in waves did not change it.
func TestHoldingKeepsTheDesiredHash(t *testing.T) {
	without, _ := Compute(kebFacts())
	if got := without.Hash(); got != "9260ba898c2fca0d355abdd3" {
		t.Errorf("hash without bootstrap manifests %s; earlier versions recorded 9260ba898c2fca0d355abdd3 for the same state", got)
	}
	withSet := func(b *Bootstrap) Desired {
		f := kebFacts()
		f.Bootstrap = b
		d, _ := Compute(f)
		return d
	}
	old := &Bootstrap{Objects: []BootstrapObject{{Kind: "ConfigMap", Name: "x", JSON: []byte(`{"v":1}`)}}}
	changed := &Bootstrap{Objects: []BootstrapObject{{Kind: "ConfigMap", Name: "x", JSON: []byte(`{"v":2}`)}}}
	reached := withSet(old)
	admitted := withSet(changed)
	held := admitted.HoldBootstrap(old.ContentHash(), Failed(ReasonBootstrapWaitingForWave, "wave 7"))
	if held.Hash() != reached.Hash() {
		t.Errorf("held at the old set: hash %s, reached with it %s; holding would configure the runtime again", held.Hash(), reached.Hash())
	}
	if admitted.Hash() == reached.Hash() {
		t.Error("admitted to the changed set: hash unchanged; admission would not configure the runtime")
	}
	if held.Bootstrap != nil || !held.BootstrapConfigured() || held.BootstrapHold == nil {
		t.Errorf("held: set %v, configured %v, hold %v; want no set given, still configured, the hold reported", held.Bootstrap,
			held.BootstrapConfigured(), held.BootstrapHold)
	}
	if nothing := admitted.HoldBootstrap("", Failed(ReasonBootstrapWaitingForWave, "")); nothing.Hash() != without.Hash() {
		t.Error("held with no set given yet (bootstrap just switched on): the hash must be the one reached without a set")
	}
}
