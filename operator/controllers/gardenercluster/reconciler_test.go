package gardenercluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/keb"
)

var start = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

// kebCluster is a GardenerCluster as KEB created them before this operator (no finalizer), as the API server
// stores it (generation 1).
func kebCluster(runtimeID, shoot string) *imv1.GardenerCluster {
	gc := keb.GardenerCluster(runtimeID, shoot)
	gc.Generation = 1
	return gc
}

type world struct {
	t        *testing.T
	client   client.Client
	issuer   *fake.KubeconfigIssuer
	store    *fake.KubeconfigSecretStore
	clock    *fake.Clock
	recorder *events.FakeRecorder
	m        *Metrics
	r        *Reconciler
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&imv1.GardenerCluster{}).Build()
	clock := fake.NewClock(start)
	w := &world{t: t, client: c, issuer: fake.NewKubeconfigIssuer(clock), store: fake.NewKubeconfigSecretStore(),
		clock: clock, recorder: events.NewFakeRecorder(100)}
	policy, err := kubeconfig.NewPolicy(24*time.Hour, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	w.m = NewMetrics(prometheus.NewRegistry())
	if w.r, err = NewReconciler(c, c, Deps{Clock: clock, Issuer: w.issuer, Secrets: w.store, Policy: policy}, w.m, w.recorder); err != nil {
		t.Fatal(err)
	}
	return w
}

// setShoots gives the reconciler a garden to check the named shoot's owner in.
func (w *world) setShoots(g *fake.Garden) {
	h := w.r.Hooks.(*hooks)
	h.rotator.Shoots = g
}

func (w *world) reconcile(name string) ctrl.Result {
	w.t.Helper()
	res, err := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: name}})
	if err != nil {
		w.t.Fatalf("Reconcile(%s): %v", name, err)
	}
	return res
}

func (w *world) get(name string) *imv1.GardenerCluster {
	w.t.Helper()
	var gc imv1.GardenerCluster
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "kcp-system", Name: name}, &gc); err != nil {
		w.t.Fatalf("get %s: %v", name, err)
	}
	return &gc
}

func (w *world) condition(name string) metav1.Condition {
	w.t.Helper()
	c := meta.FindStatusCondition(w.get(name).Status.Conditions, imv1.ConditionKubeconfigManagement)
	if c == nil {
		w.t.Fatalf("%s has no %s condition", name, imv1.ConditionKubeconfigManagement)
	}
	return *c
}

func (w *world) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (w *world) patchAnnotation(name, key, value string) {
	w.t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, key, value)
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kcp-system"}}
	if err := w.client.Patch(context.Background(), gc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		w.t.Fatalf("patch annotation: %v", err)
	}
}

const rid = "0b8a3a4e-5e3c-4c8a-9d41-0f3e2b6c1a11"

func TestFirstKubeconfigForKEBCluster(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	rotationsBefore := testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelTime))

	res := w.reconcile(rid)

	gc := w.get(rid)
	if !slices.Contains(gc.Finalizers, Finalizer) {
		t.Errorf("finalizer missing: %v", gc.Finalizers)
	}
	ref := ports.SecretRef{Namespace: "kcp-system", Name: "kubeconfig-" + rid, Key: "config"}
	md, err := w.store.ReadMetadata(context.Background(), ref, ports.ReadLive)
	if err != nil || !md.HasKubeconfig {
		t.Fatalf("Secret %s: %+v, %v; want a kubeconfig", ref, md, err)
	}
	if md.Labels[wire.LabelManagedBy] != wire.ManagedByValue || md.Labels[imv1.LabelGlobalAccountID] != "ga-1" {
		t.Errorf("Secret labels %v: want the CR's labels with managed-by=%s", md.Labels, wire.ManagedByValue)
	}
	if md.Annotations[kubeconfig.AnnotationExpiresAt] != "2026-11-04T10:00:00Z" {
		t.Errorf("expiry annotation %q, want 2026-11-04T10:00:00Z", md.Annotations[kubeconfig.AnnotationExpiresAt])
	}
	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonSecretCreated) || c.Status != metav1.ConditionTrue {
		t.Errorf("condition %s/%s, want True/%s", c.Status, c.Reason, string(kubeconfig.ReasonSecretCreated))
	}
	if gc.Status.State != imv1.GardenerClusterStateReady || gc.Status.ObservedGeneration != 1 {
		t.Errorf("state %s observedGeneration %d, want Ready/1", gc.Status.State, gc.Status.ObservedGeneration)
	}
	// 60% of 24h plus at most 5% jitter.
	if res.RequeueAfter < 864*time.Minute || res.RequeueAfter > 936*time.Minute {
		t.Errorf("RequeueAfter %s, want between 14h24m and 15h36m", res.RequeueAfter)
	}
	if n := w.issuer.TotalCalls(); n != 1 {
		t.Errorf("Gardener calls %d, want 1", n)
	}
	if ev := w.drainEvents(); len(ev) != 1 || !strings.Contains(ev[0], string(kubeconfig.ReasonSecretCreated)) {
		t.Errorf("events %q, want one %s", ev, string(kubeconfig.ReasonSecretCreated))
	}
	if got := testutil.ToFloat64(w.m.ExpirationTimestamp.WithLabelValues(rid, "c-1a2b3c")); got != float64(start.Add(24*time.Hour).Unix()) {
		t.Errorf("expiration metric %v, want %d", got, start.Add(24*time.Hour).Unix())
	}
	if testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelTime)) != rotationsBefore {
		t.Error("the first kubeconfig was counted as a rotation")
	}
}

func TestNothingDueMeansNoGardenerCallAndNoWrite(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	rv := w.get(rid).ResourceVersion
	w.drainEvents()

	for range 5 {
		w.clock.Step(time.Hour)
		res := w.reconcile(rid)
		if res.RequeueAfter <= 0 {
			t.Fatalf("RequeueAfter %s, want the time until the rotation point", res.RequeueAfter)
		}
	}
	if n := w.issuer.TotalCalls(); n != 1 {
		t.Errorf("Gardener calls %d, want 1 (only the first issue)", n)
	}
	if w.store.Writes() != 1 {
		t.Errorf("Secret writes %d, want 1", w.store.Writes())
	}
	if got := w.get(rid).ResourceVersion; got != rv {
		t.Errorf("GardenerCluster written by no-op reconciles (resourceVersion %s -> %s)", rv, got)
	}
	if ev := w.drainEvents(); len(ev) != 0 {
		t.Errorf("events on no-op reconciles: %q", ev)
	}
}

func TestRotationOnTime(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	res := w.reconcile(rid)
	before := testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelTime))

	w.clock.Step(res.RequeueAfter)
	w.reconcile(rid)

	if n := w.issuer.TotalCalls(); n != 2 {
		t.Errorf("Gardener calls %d, want 2", n)
	}
	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonSecretRotated) {
		t.Errorf("reason %s, want %s", c.Reason, string(kubeconfig.ReasonSecretRotated))
	}
	if got := testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelTime)) - before; got != 1 {
		t.Errorf("time rotations +%v, want +1", got)
	}
}

func TestForcedRotation(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	ref := ports.SecretRef{Namespace: "kcp-system", Name: "kubeconfig-" + rid, Key: "config"}
	before := testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelForced))

	for i := 1; i <= 3; i++ {
		old, _ := w.store.Kubeconfig(ref)
		w.patchAnnotation(rid, imv1.AnnotationForceKubeconfigRotation, "true")
		w.reconcile(rid)
		gc := w.get(rid)
		if _, ok := gc.Annotations[imv1.AnnotationForceKubeconfigRotation]; ok {
			t.Fatalf("rotation %d: force annotation still set", i)
		}
		if gc.Annotations[imv1.AnnotationSKRDomain] == "" {
			t.Fatalf("rotation %d: removing the force annotation removed other annotations: %v", i, gc.Annotations)
		}
		if now, _ := w.store.Kubeconfig(ref); string(now) == string(old) {
			t.Fatalf("rotation %d: kubeconfig unchanged", i)
		}
		// A reconcile right after (the annotation removal's own event) must not rotate again, and the reason stays.
		w.reconcile(rid)
		if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonSecretRotated) {
			t.Fatalf("rotation %d: reason %s, want %s", i, c.Reason, string(kubeconfig.ReasonSecretRotated))
		}
	}
	if n := w.issuer.TotalCalls(); n != 4 {
		t.Errorf("Gardener calls %d, want 4 (1 initial + 3 forced)", n)
	}
	if got := testutil.ToFloat64(w.m.Rotations.WithLabelValues(TriggerLabelForced)) - before; got != 3 {
		t.Errorf("forced rotations +%v, want +3", got)
	}
}
