package shootreaper

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestReaperEnqueuesOnlyTheShootThatChanged: a shoot event puts that one shoot on the reaper's queue (issue 18: no
// work per event that grows with the fleet), and events of shoots the operator does not manage none.
func TestReaperEnqueuesOnlyTheShootThatChanged(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	managed := func(name string) *gardencorev1beta1.Shoot {
		return &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-kyma",
			Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}}
	}
	h, p := reaperEvents(), managedShoots()
	old, changed := managed("c-7"), managed("c-7")
	changed.Status.LastOperation = &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded}
	if !p.Update(event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: old, ObjectNew: changed}) {
		t.Fatal("the event of a managed shoot is filtered out")
	}
	h.Update(t.Context(), event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: old, ObjectNew: changed}, q)
	if q.Len() != 1 {
		t.Fatalf("queue length %d after one shoot event; want 1", q.Len())
	}
	if r, _ := q.Get(); r.Name != "c-7" || r.Namespace != "garden-kyma" {
		t.Errorf("enqueued %v; want garden-kyma/c-7", r)
	}
	foreign := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-8", Namespace: "garden-kyma"}}
	if p.Create(event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: foreign}) {
		t.Error("the event of a shoot the operator does not manage reaches the reaper")
	}
}

// countingLister counts the walks over the fleet.
type countingLister struct {
	ports.ShootLister
	lists int
}

func (c *countingLister) ListManaged(ctx context.Context) ([]shootstate.Shoot, error) {
	c.lists++
	return c.ShootLister.ListManaged(ctx)
}

// TestFleetGaugesAreComputedWhenScraped: the fleet gauges walk the cached shoots once per scrape (and only then),
// and count what the use case counts.
func TestFleetGaugesAreComputedWhenScraped(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := fake.NewClock(now)
	garden := fake.NewGarden(clock)
	const fleet = 50
	for i := range fleet {
		if _, err := garden.Apply(t.Context(), ports.ShootApply{Spec: shoot.Spec{Name: fmt.Sprintf("c-%d", i)}, RuntimeID: fmt.Sprintf("rt-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	kcp := fakeclient.NewClientBuilder().WithScheme(scheme)
	for i := range fleet - 3 { // three runtimes are gone without a deletion record: orphans
		kcp = kcp.WithObjects(&imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rt-%d", i), Namespace: "kcp-system"}})
	}
	lister := &countingLister{ShootLister: garden}
	c := &FleetCollector{Fleet: &usecase.Fleet{Shoots: lister, Guard: &fake.DeletionGuard{}}, KCP: kcp.Build(), Clock: clock}

	if lister.lists != 0 {
		t.Fatalf("the collector walked the fleet %d times before a scrape", lister.lists)
	}
	got := collect(t, c)
	if lister.lists != 1 {
		t.Errorf("one scrape walked the fleet %d times; want once", lister.lists)
	}
	if got["kim_shoots_orphaned"] != 3 || got["kim_shoots_pending_deletion"] != 0 {
		t.Errorf("gauges %v; want 3 orphaned, 0 pending", got)
	}
}

// TestFleetGaugesShareAWalkWithinReuse: scrapes closer together than Reuse are served from one walk; the first
// scrape after Reuse walks again and sees what changed.
func TestFleetGaugesShareAWalkWithinReuse(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := fake.NewClock(now)
	garden := fake.NewGarden(clock)
	for i := range 4 {
		if _, err := garden.Apply(t.Context(), ports.ShootApply{Spec: shoot.Spec{Name: fmt.Sprintf("c-%d", i)}, RuntimeID: fmt.Sprintf("rt-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	kcp := fakeclient.NewClientBuilder().WithScheme(scheme).Build()
	lister := &countingLister{ShootLister: garden}
	c := &FleetCollector{Fleet: &usecase.Fleet{Shoots: lister, Guard: &fake.DeletionGuard{}}, KCP: kcp, Clock: clock, Reuse: 10 * time.Second}

	if got := collect(t, c); got["kim_shoots_orphaned"] != 4 {
		t.Fatalf("gauges %v; want 4 orphaned (no Runtime exists)", got)
	}
	if err := kcp.Create(t.Context(), &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt-0", Namespace: "kcp-system"}}); err != nil {
		t.Fatal(err)
	}
	clock.Step(9 * time.Second)
	if got := collect(t, c); got["kim_shoots_orphaned"] != 4 || lister.lists != 1 {
		t.Errorf("a scrape within Reuse: gauges %v after %d walks; want the first walk's 4 orphaned, 1 walk", got, lister.lists)
	}
	if got := collect(t, c); len(got) != 8 {
		t.Errorf("a reused walk served %d gauges; want all 8", len(got))
	}
	clock.Step(time.Second)
	if got := collect(t, c); got["kim_shoots_orphaned"] != 3 || lister.lists != 2 {
		t.Errorf("the scrape at Reuse: gauges %v after %d walks; want 3 orphaned from a second walk", got, lister.lists)
	}
}

// collect scrapes c once and returns the value of each gauge by name.
func collect(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 32)
	c.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(m.Desc().String(), `fqName: "`)
		name, _, _ := strings.Cut(rest, `"`)
		out[name] = pb.GetGauge().GetValue()
	}
	return out
}
