package kymaruntime

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

type staticBootstrap struct{ set *runtimeconfig.Bootstrap }

func (s *staticBootstrap) Load(context.Context) (*runtimeconfig.Bootstrap, error) { return s.set, nil }

func configMapSet(value string) *runtimeconfig.Bootstrap {
	return &runtimeconfig.Bootstrap{Source: "kcp-system/kim-bootstrap", Objects: []runtimeconfig.BootstrapObject{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "a", JSON: fmt.Appendf(nil, `{"data":{"v":%q}}`, value)}}}
}

// TestStatusRecordsTheBootstrapAttempt: the Runtime's status records the set last attempted and whether it failed,
// also when the configuration was not reached, and a held runtime is Ready and says it waits for its wave.
func TestStatusRecordsTheBootstrapAttempt(t *testing.T) {
	w := newWorld(t)
	source := &staticBootstrap{set: configMapSet("v1")}
	policy := runtimeconfig.RolloutPolicy{Share: 0.1, MaxFailures: 0.05}
	w.provision.Bootstrap = source
	w.provision.Rollout = &usecase.BootstrapRollout{Runtimes: &kube.RuntimeBootstrapRecords{Cache: w.kcp}, Source: source, Policy: policy}
	w.reconcile(t)
	w.garden.Succeed("c-91f0e7a")
	w.reconcile(t)
	w.access.SetKubeconfig(w.req.Namespace, w.req.Name)
	rt := w.reconcile(t)
	rc := rt.Status.RuntimeConfiguration
	if rt.Status.State != imv1.RuntimeStateReady || rc == nil || rc.BootstrapHash != source.set.ContentHash() || rc.BootstrapFailed {
		t.Fatalf("after provisioning: %s (%s), runtimeConfiguration %+v; want Ready, the set recorded as reached", rt.Status.State, readyReason(rt), rc)
	}
	reached := rc.Hash

	t.Run("a failed attempt is recorded, the configuration it did not reach is not", func(t *testing.T) {
		source.set = configMapSet("v2")
		w.cfg.FailBootstrap(rt.Name, true)
		w.clock.Step(usecase.DefaultRolloutInterval)
		rt = w.reconcileFailing(t)
		rc := rt.Status.RuntimeConfiguration
		if rc == nil || rc.BootstrapHash != source.set.ContentHash() || !rc.BootstrapFailed || rc.Hash != reached {
			t.Fatalf("runtimeConfiguration %+v; want the new set failed, the reached hash %s kept", rc, reached)
		}
		if c := meta.FindStatusCondition(rt.Status.Conditions, lifecycle.ConditionBootstrapped); c == nil ||
			c.Reason != string(runtimeconfig.ReasonBootstrapFailed) || c.Status != metav1.ConditionFalse {
			t.Errorf("Bootstrapped %+v", c)
		}
	})
	t.Run("held: Ready, Bootstrapped says it waits for its wave, nothing applied", func(t *testing.T) {
		w.cfg.FailBootstrap(rt.Name, false)
		// Ten other Runtimes that were Ready and have not tried the next set; one of them comes before this one.
		for i := range 10 {
			other := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: w.req.Namespace, Name: fmt.Sprintf("rt-other-%d", i)}}
			if err := w.kcp.Create(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			other.Status = imv1.RuntimeStatus{State: imv1.RuntimeStateReady, ProvisioningCompleted: true}
			if err := w.kcp.Status().Update(t.Context(), other); err != nil {
				t.Fatal(err)
			}
		}
		var next *runtimeconfig.Bootstrap
		for v := 3; next == nil; v++ {
			set := configMapSet(fmt.Sprintf("v%d", v))
			plan := runtimeconfig.PlanRollout(set.ContentHash(), policy, []runtimeconfig.RolloutMember{{RuntimeID: "rt-other-0"}, {RuntimeID: "rt-other-1"},
				{RuntimeID: "rt-other-2"}, {RuntimeID: "rt-other-3"}, {RuntimeID: "rt-other-4"}, {RuntimeID: "rt-other-5"}, {RuntimeID: "rt-other-6"},
				{RuntimeID: "rt-other-7"}, {RuntimeID: "rt-other-8"}, {RuntimeID: "rt-other-9"}, {RuntimeID: rt.Name}})
			if plan.WaveOf(rt.Name) > plan.Wave {
				next = set
			}
		}
		before := w.cfg.BootstrapPasses(rt.Name)
		source.set = next
		w.clock.Step(usecase.DefaultRolloutInterval)
		rt = w.reconcile(t)
		c := meta.FindStatusCondition(rt.Status.Conditions, lifecycle.ConditionBootstrapped)
		if rt.Status.State != imv1.RuntimeStateReady || c == nil || c.Reason != string(runtimeconfig.ReasonBootstrapWaitingForWave) {
			t.Fatalf("held: %s (%s), Bootstrapped %+v; want Ready and %s", rt.Status.State, readyReason(rt), c, runtimeconfig.ReasonBootstrapWaitingForWave)
		}
		if w.cfg.BootstrapPasses(rt.Name) != before {
			t.Error("a held runtime was given the set")
		}
		if rc := rt.Status.RuntimeConfiguration; rc.BootstrapHash == next.ContentHash() {
			t.Errorf("a held runtime records the set it was not given: %+v", rc)
		}
	})
}

// TestRolloutTrackerEnqueuesTheAdmittedWave: a tick of the tracker puts exactly the Runtimes a wave that advanced
// admits on the queue (as generic events) and reports the rollout as gauges.
func TestRolloutTrackerEnqueuesTheAdmittedWave(t *testing.T) {
	set := configMapSet("v1")
	h := set.ContentHash()
	records := fake.NewRuntimeBootstrapRecords()
	for i := range 100 {
		records.Put(ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: fmt.Sprintf("rt-%03d", i), EverReady: true})
	}
	clock := fake.NewClock(metav1.Now().Time)
	rollout := &usecase.BootstrapRollout{Runtimes: records, Source: &staticBootstrap{set: set},
		Policy: runtimeconfig.RolloutPolicy{Share: 0.1, MaxFailures: 0.05}}
	events := make(chan event.TypedGenericEvent[reconcile.Request], 200)
	m := NewMetrics(prometheus.NewRegistry())
	tr := &rolloutTracker{rollout: rollout, clock: clock, metrics: m, interval: usecase.DefaultRolloutInterval, events: events}
	tr.refresh(t.Context()) // wave 1 announced (every Runtime is reconciled at start: nothing enqueued)
	if len(events) != 0 || testutil.ToFloat64(m.rollout.wave) != 1 || testutil.ToFloat64(m.rollout.waves) != 10 {
		t.Fatalf("first tick: %d events, wave gauge %v of %v", len(events), testutil.ToFloat64(m.rollout.wave), testutil.ToFloat64(m.rollout.waves))
	}
	// Every runtime of wave 1 tried the set; the next tick admits wave 2 and enqueues exactly its runtimes.
	want := map[string]bool{}
	firstWave := 0
	for i := range 100 {
		id := fmt.Sprintf("rt-%03d", i)
		switch runtimeconfig.RolloutPosition(h, id) / 1000 {
		case 0:
			records.Put(ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: id, EverReady: true,
				Bootstrap: runtimeconfig.BootstrapRecord{Hash: h, Failed: firstWave == 0}})
			firstWave++
		case 1:
			want[id] = true
		}
	}
	if len(want) == 0 || firstWave == 0 {
		t.Fatal("the fleet has no runtime in wave 1 or 2: the test proves nothing")
	}
	clock.Step(usecase.DefaultRolloutInterval)
	tr.refresh(t.Context())
	got := map[string]bool{}
	for len(events) > 0 {
		e := <-events
		got[e.Object.Name] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("enqueued %v; want wave 2: %v", got, want)
	}
	if testutil.ToFloat64(m.rollout.wave) != 2 || testutil.ToFloat64(m.rollout.stopped) != 0 || testutil.ToFloat64(m.rollout.failed) != 1 {
		t.Errorf("gauges: wave %v, stopped %v, failed %v; want 2, 0, 1", testutil.ToFloat64(m.rollout.wave),
			testutil.ToFloat64(m.rollout.stopped), testutil.ToFloat64(m.rollout.failed))
	}
}
