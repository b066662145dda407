package usecase_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// rolloutFleet is a fleet of runtimes on the fakes whose passes record into the Runtimes' status what the
// controller records (fake.RuntimeBootstrapRecords stands for the manager's cache of them).
type rolloutFleet struct {
	t       *testing.T
	clock   *fake.Clock
	garden  *fake.Garden
	access  *fake.AccessObjects
	cfg     *fake.RuntimeConfigurator
	source  *fakeBootstrap
	records *fake.RuntimeBootstrapRecords
	rollout *usecase.BootstrapRollout
	p       *usecase.Provisioner
	reqs    []usecase.RuntimeRequest
	last    []usecase.ProvisionResult
}

var rolloutPolicy = runtimeconfig.RolloutPolicy{Share: 0.1, MaxFailures: 0.05}

func bootstrapSet(objects ...string) *runtimeconfig.Bootstrap {
	b := &runtimeconfig.Bootstrap{Source: "kcp-system/kim-bootstrap"}
	for _, o := range objects {
		name, data, _ := strings.Cut(o, "=")
		b.Objects = append(b.Objects, runtimeconfig.BootstrapObject{APIVersion: "v1", Kind: "ConfigMap", Name: name,
			JSON: fmt.Appendf(nil, `{"data":{"v":%q}}`, data)})
	}
	return b
}

// newRolloutFleet brings n runtimes to Ready with the set first (all new: given it at once).
func newRolloutFleet(t *testing.T, n int, first *runtimeconfig.Bootstrap) *rolloutFleet {
	clock := fake.NewClock(reapStart)
	f := &rolloutFleet{t: t, clock: clock, garden: fake.NewGarden(clock), access: fake.NewAccessObjects(), cfg: fake.NewRuntimeConfigurator(),
		source: &fakeBootstrap{set: first}, records: fake.NewRuntimeBootstrapRecords()}
	f.rollout = &usecase.BootstrapRollout{Runtimes: f.records, Shoots: f.garden, Source: f.source, Policy: rolloutPolicy}
	f.p = &usecase.Provisioner{Shoots: f.garden, Seeds: f.garden, Access: f.access, Configurator: f.cfg, Guard: &fake.DeletionGuard{},
		Config: modelConfig(), Policy: modelPolicy(), DriftPeriod: 24 * time.Hour, Bootstrap: f.source, Rollout: f.rollout}
	for i := range n {
		rt := (&kcpRuntime{id: fmt.Sprintf("rt-%04d", i), shoot: fmt.Sprintf("c-%04d", i), plan: "aws", generation: 1}).spec()
		f.reqs = append(f.reqs, usecase.RuntimeRequest{Runtime: rt, Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}})
		f.records.Put(ports.RuntimeBootstrap{Namespace: modelNamespace, RuntimeID: rt.ID, ShootName: rt.Name})
	}
	f.last = make([]usecase.ProvisionResult, n)
	f.passAll() // shoots created
	for _, r := range f.reqs {
		f.garden.Progress(r.Runtime.Name)
		f.access.SetKubeconfig(modelNamespace, r.Runtime.ID)
	}
	f.passAll() // configured while Gardener works
	for _, r := range f.reqs {
		f.garden.Succeed(r.Runtime.Name)
	}
	f.passAll() // Ready
	f.clock.Step(time.Second)
	f.passAll() // the reconcile time written
	for i := range f.reqs {
		if d := f.last[i].Decision; d.State != lifecycle.StateReady {
			t.Fatalf("%s after provisioning: %s %s (%s)", f.id(i), d.State, d.Reason, d.Message)
		}
	}
	return f
}

func (f *rolloutFleet) id(i int) string { return f.reqs[i].Runtime.ID }

// pass reconciles runtime i and records the result as the controller's status does.
func (f *rolloutFleet) pass(i int) usecase.ProvisionResult {
	f.t.Helper()
	res, err := f.p.Provision(context.Background(), f.reqs[i], f.clock.Now())
	if err != nil {
		f.t.Fatalf("%s: %v", f.id(i), err)
	}
	r := &f.reqs[i]
	r.Configured = res.Configured
	r.EverReady = r.EverReady || res.Decision.State == lifecycle.StateReady
	f.last[i] = res
	f.records.Put(ports.RuntimeBootstrap{Namespace: r.Namespace, RuntimeID: r.Runtime.ID, ShootName: r.Runtime.Name,
		Bootstrap: res.Configured.Bootstrap, EverReady: r.EverReady, GaveUp: res.Decision.State == lifecycle.StateFailed})
	return res
}

func (f *rolloutFleet) passAll() {
	for i := range f.reqs {
		f.pass(i)
	}
}

// refresh is one tick of the controller's tracker: the rollout derived a few seconds later, and the Runtimes it
// enqueues reconciled.
func (f *rolloutFleet) refresh() usecase.RolloutRefresh {
	f.t.Helper()
	f.clock.Step(usecase.DefaultRolloutInterval)
	res, err := f.rollout.Refresh(context.Background(), f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	for _, k := range res.Enqueue {
		f.pass(f.index(k.Name))
	}
	return res
}

// refreshOnly is a tick whose enqueued runtimes are not reconciled yet.
func (f *rolloutFleet) refreshOnly() usecase.RolloutRefresh {
	f.t.Helper()
	f.clock.Step(usecase.DefaultRolloutInterval)
	res, err := f.rollout.Refresh(context.Background(), f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *rolloutFleet) index(id string) int {
	var i int
	if _, err := fmt.Sscanf(id, "rt-%04d", &i); err != nil {
		f.t.Fatal(err)
	}
	return i
}

func (f *rolloutFleet) wave(hash string, i int) int {
	return runtimeconfig.RolloutPosition(hash, f.id(i))/1000 + 1
}

// bootstrapped is the Bootstrapped condition runtime i's status shows after its last pass.
func (f *rolloutFleet) bootstrapped(i int) (lifecycle.Condition, bool) {
	for _, c := range lifecycle.Conditions(f.last[i].Input, f.last[i].Configuration) {
		if c.Type == lifecycle.ConditionBootstrapped {
			return c, true
		}
	}
	return lifecycle.Condition{}, false
}

// has reports which version of the set runtime i holds: the value of ConfigMap a, and whether b exists.
func (f *rolloutFleet) has(i int) (string, bool) {
	raw := f.cfg.BootstrapObjectJSON(f.id(i), "ConfigMap", runtimeconfig.Namespace, "a")
	return string(raw), f.cfg.BootstrapObject(f.id(i), "ConfigMap", runtimeconfig.Namespace, "b")
}

// TestBootstrapRolloutInWaves: over a fleet of 1,000 runtimes a changed set reaches a tenth at a time; held runtimes
// keep what they have (nothing applied, nothing pruned, not configured at all), stay Ready and say why; each wave
// enqueues exactly the runtimes it admits; a restart derives the same wave; failures above the threshold stop the
// rollout until the failing runtimes recover.
func TestBootstrapRolloutInWaves(t *testing.T) {
	old := bootstrapSet("a=v1", "b=v1")
	f := newRolloutFleet(t, 1000, old)
	for i := range f.reqs {
		if a, b := f.has(i); a != `{"data":{"v":"v1"}}` || !b {
			t.Fatalf("%s after provisioning holds a=%s b=%v; want the first set (new runtimes are given it at once)", f.id(i), a, b)
		}
	}
	changed := bootstrapSet("a=v2") // a changes, b is pruned where the set arrives
	h := changed.ContentHash()
	// One runtime of the first wave hibernates before the change: no wave may wait for it.
	hibernated := -1
	for i := range f.reqs {
		if f.wave(h, i) == 1 {
			hibernated = i
			f.garden.Hibernate(f.reqs[i].Runtime.Name, true)
			break
		}
	}
	passes := make([]int, len(f.reqs))
	for i := range f.reqs {
		passes[i] = f.cfg.BootstrapPasses(f.id(i))
	}

	f.source.set = changed
	f.clock.Step(usecase.DefaultRolloutInterval)
	f.passAll() // the watch on the manifests enqueues every Runtime
	admitted := 0
	for i := range f.reqs {
		a, b := f.has(i)
		switch {
		case i == hibernated:
			if a != `{"data":{"v":"v1"}}` {
				t.Errorf("the hibernated runtime was written: a=%s", a)
			}
		case f.wave(h, i) == 1:
			admitted++
			if a != `{"data":{"v":"v2"}}` || b {
				t.Errorf("%s of wave 1 holds a=%s b=%v; want the changed set, b pruned", f.id(i), a, b)
			}
		default:
			c, _ := f.bootstrapped(i)
			if a != `{"data":{"v":"v1"}}` || !b || f.cfg.BootstrapPasses(f.id(i)) != passes[i] || f.last[i].Configuration != nil {
				t.Fatalf("%s of wave %d is held but holds a=%s b=%v, bootstrap passes %d -> %d, configured %v; want nothing applied, "+
					"pruned or configured", f.id(i), f.wave(h, i), a, b, passes[i], f.cfg.BootstrapPasses(f.id(i)), f.last[i].Configuration != nil)
			}
			if d := f.last[i].Decision; d.State != lifecycle.StateReady || c.Reason != string(runtimeconfig.ReasonBootstrapWaitingForWave) || c.Status {
				t.Fatalf("%s held: %s %s, Bootstrapped %+v; want Ready and %s", f.id(i), d.State, d.Reason, c, runtimeconfig.ReasonBootstrapWaitingForWave)
			}
		}
	}
	if admitted < 60 || admitted > 140 {
		t.Fatalf("wave 1 admitted %d of 1,000 runtimes; want about a tenth", admitted)
	}
	// A held runtime passed again is not configured again (its desired state is the one it reached); configured for
	// another reason (an administrator added, the drift period passed), it still gets no set and prunes nothing.
	var held []int
	for i := range f.reqs {
		if f.wave(h, i) > 1 && len(held) < 2 {
			held = append(held, i)
		}
	}
	if f.pass(held[0]); f.last[held[0]].Configuration != nil {
		t.Fatalf("%s held: configured again on its next pass", f.id(held[0]))
	}
	f.reqs[held[0]].Runtime.Administrators = append(f.reqs[held[0]].Runtime.Administrators, "carol@example.com")
	f.pass(held[0])
	f.clock.Step(24*time.Hour + 3*time.Hour) // beyond the drift period, stretched by up to a tenth
	f.pass(held[1])
	for n, i := range held {
		a, b := f.has(i)
		c, _ := f.bootstrapped(i)
		if f.last[i].Configuration == nil || a != `{"data":{"v":"v1"}}` || !b || f.cfg.BootstrapPasses(f.id(i)) != passes[i] ||
			c.Reason != string(runtimeconfig.ReasonBootstrapWaitingForWave) {
			t.Fatalf("held %s configured for another reason (%d): configured %v, a=%s b=%v, bootstrap passes %d -> %d, Bootstrapped %+v; "+
				"want configured without the set", f.id(i), n, f.last[i].Configuration != nil, a, b, passes[i], f.cfg.BootstrapPasses(f.id(i)), c)
		}
	}
	if got := f.cfg.Admins(f.id(held[0])); !slices.Contains(got, "carol@example.com") {
		t.Fatalf("held runtime's administrators %v: its other configuration must go on", got)
	}

	for wave := 2; wave <= 10; wave++ {
		if wave == 5 {
			// A restart in the middle: a new tracker derives the same wave from the same records.
			f.clock.Step(usecase.DefaultRolloutInterval)
			before, err := f.rollout.Plan(context.Background(), h, f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			restarted := &usecase.BootstrapRollout{Runtimes: f.records, Shoots: f.garden, Source: f.source, Policy: rolloutPolicy}
			after, err := restarted.Plan(context.Background(), h, f.clock.Now())
			if err != nil || after.Wave != before.Wave || after.Stopped != before.Stopped || after.Tried != before.Tried {
				t.Fatalf("after a restart: wave %d (tried %d) %v; before: wave %d (tried %d)", after.Wave, after.Tried, err, before.Wave, before.Tried)
			}
		}
		res := f.refreshOnly()
		var want []string
		for i := range f.reqs {
			if f.wave(h, i) == wave && i != hibernated {
				want = append(want, f.id(i))
			}
		}
		var got []string
		for _, k := range res.Enqueue {
			got = append(got, k.Name)
		}
		slices.Sort(got)
		if res.Plan.Wave != wave || !slices.Equal(got, want) {
			t.Fatalf("refresh for wave %d: plan at wave %d (stopped %v, waiting %d), enqueued %d runtimes, want the %d of wave %d",
				wave, res.Plan.Wave, res.Plan.Stopped, res.Plan.Waiting, len(got), len(want), wave)
		}
		if wave == 2 {
			// The tracker's next tick before the enqueued runtimes were reconciled: nothing new to enqueue.
			if again := f.refreshOnly(); len(again.Enqueue) != 0 {
				t.Fatalf("a refresh without progress enqueued %d runtimes", len(again.Enqueue))
			}
		}
		for _, k := range res.Enqueue {
			f.pass(f.index(k.Name))
		}
	}
	for i := range f.reqs {
		if a, _ := f.has(i); i != hibernated && a != `{"data":{"v":"v2"}}` {
			t.Fatalf("%s after the last wave holds a=%s", f.id(i), a)
		}
	}

	t.Run("failures above the threshold stop the rollout until they recover", func(t *testing.T) {
		f.garden.Hibernate(f.reqs[hibernated].Runtime.Name, false)
		bad := bootstrapSet("a=v3")
		hb := bad.ContentHash()
		failing := map[int]bool{}
		for i := range f.reqs {
			if f.wave(hb, i) == 1 && len(failing) < 10 { // of about 100 in wave 1: more than 5 %
				failing[i] = true
				f.cfg.FailBootstrap(f.id(i), true)
			}
		}
		f.source.set = bad
		f.clock.Step(usecase.DefaultRolloutInterval)
		f.passAll()
		res := f.refresh()
		if !res.Plan.Stopped || res.Plan.Failed != len(failing) || res.Plan.Wave != 1 {
			t.Fatalf("after wave 1 with %d failures: stopped %v, failed %d, wave %d; want stopped in wave 1", len(failing),
				res.Plan.Stopped, res.Plan.Failed, res.Plan.Wave)
		}
		for i := range f.reqs {
			if failing[i] {
				if d := f.last[i].Decision; d.State == lifecycle.StateReady {
					t.Errorf("%s failed the set but is Ready", f.id(i))
				}
			}
		}
		// The held runtimes are told of the stop once the notification interval allows.
		f.clock.Step(usecase.HeldNotifyInterval)
		res = f.refresh()
		held := 0
		for _, k := range res.Enqueue {
			i := f.index(k.Name)
			c, _ := f.bootstrapped(i)
			if a, _ := f.has(i); a == `{"data":{"v":"v3"}}` || c.Reason != string(runtimeconfig.ReasonBootstrapWaitingForWave) ||
				!strings.Contains(c.Message, "stopped in wave 1") {
				t.Fatalf("%s held after the stop: a=%s, Bootstrapped %+v", k.Name, a, c)
			}
			held++
		}
		if held < 850 {
			t.Fatalf("the stop enqueued %d held runtimes; want every one of the about 900", held)
		}
		for i := range f.reqs {
			if f.wave(hb, i) > 1 {
				if a, _ := f.has(i); a == `{"data":{"v":"v3"}}` {
					t.Fatalf("%s of wave %d was given the set of a stopped rollout", f.id(i), f.wave(hb, i))
				}
			}
		}
		// The failing runtimes recover (they keep retrying the set they tried): failures drop, the rollout goes on.
		for i := range failing {
			f.cfg.FailBootstrap(f.id(i), false)
			f.pass(i)
		}
		if res := f.refresh(); res.Plan.Stopped || res.Plan.Wave != 2 || len(res.Enqueue) == 0 {
			t.Fatalf("after the failures recovered: stopped %v, wave %d, enqueued %d; want wave 2 admitted", res.Plan.Stopped,
				res.Plan.Wave, len(res.Enqueue))
		}
	})
}

// TestNewRuntimesGetTheSetDuringARollout: a runtime created while the rollout holds most of the fleet is given the
// current set at once (it has no earlier set to keep), and a runtime whose bootstrap failed before it was ever
// Ready has its failure recorded and counted.
func TestNewRuntimesGetTheSetDuringARollout(t *testing.T) {
	f := newRolloutFleet(t, 50, bootstrapSet("a=v1"))
	changed := bootstrapSet("a=v2")
	f.source.set = changed
	f.clock.Step(usecase.DefaultRolloutInterval)
	f.passAll()
	var late int
	for late = range f.reqs {
		if f.wave(changed.ContentHash(), late) > 1 {
			break
		}
	}
	// Runtime "late" is re-created as a new one (never Ready): admitted although its wave is far.
	f.reqs[late].EverReady, f.reqs[late].Configured = false, usecase.RecordedConfiguration{}
	f.records.Put(ports.RuntimeBootstrap{Namespace: modelNamespace, RuntimeID: f.id(late), ShootName: f.reqs[late].Runtime.Name})
	f.cfg.FailBootstrap(f.id(late), true)
	f.pass(late)
	if got := f.reqs[late].Configured.Bootstrap; got.Hash != changed.ContentHash() || !got.Failed {
		t.Fatalf("a new runtime's failed attempt recorded %+v; want the set, failed", got)
	}
	plan, err := f.rollout.Plan(context.Background(), changed.ContentHash(), f.clock.Now().Add(usecase.DefaultRolloutInterval))
	if err != nil || plan.Failed != 1 {
		t.Fatalf("failures counted %d (%v); want the new runtime's", plan.Failed, err)
	}
	f.cfg.FailBootstrap(f.id(late), false)
	f.pass(late)
	if a, _ := f.has(late); a != `{"data":{"v":"v2"}}` {
		t.Fatalf("the new runtime holds a=%s; want the current set at once", a)
	}
}

// TestRolloutWalksTheFleetAtMostOncePerInterval: reconciles of 1,000 runtimes within one interval walk the cached
// Runtimes once, not once each.
func TestRolloutWalksTheFleetAtMostOncePerInterval(t *testing.T) {
	records := fake.NewRuntimeBootstrapRecords()
	for i := range 1000 {
		records.Put(ports.RuntimeBootstrap{Namespace: modelNamespace, RuntimeID: fmt.Sprintf("rt-%04d", i), EverReady: true})
	}
	r := &usecase.BootstrapRollout{Runtimes: records, Policy: rolloutPolicy}
	now := reapStart
	for i := range 1000 {
		if _, err := r.Plan(context.Background(), "h1", now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if records.Lists != 1 {
		t.Fatalf("1,000 plans within a second walked the fleet %d times; want once", records.Lists)
	}
	if _, err := r.Plan(context.Background(), "h1", now.Add(usecase.DefaultRolloutInterval)); err != nil || records.Lists != 2 {
		t.Fatalf("after the interval: %d walks (%v); want a second one", records.Lists, err)
	}
}
