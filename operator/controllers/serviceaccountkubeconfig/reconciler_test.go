package serviceaccountkubeconfig

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

var start = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

type world struct {
	t        *testing.T
	client   client.Client
	clock    *fake.Clock
	ids      *fake.RuntimeIdentities
	store    *fake.IdentityKubeconfigStore
	recorder *events.FakeRecorder
	r        *Reconciler
}

func sample() *imv1.ServiceAccountKubeconfig {
	return &imv1.ServiceAccountKubeconfig{
		ObjectMeta: metav1.ObjectMeta{Name: "lm", Namespace: "kcp-system", Generation: 1},
		Spec: imv1.ServiceAccountKubeconfigSpec{RuntimeID: "rid", SecretName: "lm-kubeconfig",
			ServiceAccount: imv1.ServiceAccountReference{Namespace: "kyma-system", Name: "lifecycle-manager"},
			Rules:          []imv1.AccessRule{{Namespaces: []string{"kyma-system"}, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
			Validity:       &metav1.Duration{Duration: time.Hour}},
	}
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&imv1.ServiceAccountKubeconfig{}).Build()
	clock := fake.NewClock(start)
	w := &world{t: t, client: c, clock: clock, ids: fake.NewRuntimeIdentities(clock.Now), store: fake.NewIdentityKubeconfigStore(),
		recorder: events.NewFakeRecorder(100)}
	w.ids.AddRuntime(ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"}, sakubeconfig.Endpoint{Server: "https://api.example", CAData: []byte("ca")})
	w.r, err = NewReconciler(c, c, Deps{Clock: clock, Identities: w.ids, Secrets: w.store, RotationFraction: 0.6,
		CleanupTimeout: time.Minute}, NewMetrics(prometheus.NewRegistry()), w.recorder)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) reconcile() ctrl.Result {
	w.t.Helper()
	res, err := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "lm"}})
	if err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (w *world) get() *imv1.ServiceAccountKubeconfig {
	w.t.Helper()
	s := &imv1.ServiceAccountKubeconfig{}
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "kcp-system", Name: "lm"}, s); err != nil {
		w.t.Fatal(err)
	}
	return s
}

func TestReconcileMapsTheResultToStatus(t *testing.T) {
	w := newWorld(t, sample())
	res := w.reconcile()
	s := w.get()
	ready := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != sakubeconfig.ReasonKubeconfigIssued || ready.ObservedGeneration != 1 {
		t.Fatalf("Ready condition %+v", ready)
	}
	if s.Status.State != imv1.ServiceAccountKubeconfigStateReady || s.Status.ObservedGeneration != 1 || s.Status.SecretName != "lm-kubeconfig" ||
		s.Status.ExpiresAt == nil || !s.Status.ExpiresAt.Time.Equal(start.Add(time.Hour)) || len(s.Status.RuntimeObjects) != 3 {
		t.Errorf("status %+v", s.Status)
	}
	if len(s.Finalizers) != 1 || s.Finalizers[0] != Finalizer {
		t.Errorf("finalizers %v", s.Finalizers)
	}
	if res.RequeueAfter < 36*time.Minute || res.RequeueAfter > 40*time.Minute {
		t.Errorf("requeue after %s, want the rotation point of a 1h token", res.RequeueAfter)
	}
	if ev := <-w.recorder.Events; !strings.Contains(ev, "Normal KubeconfigIssued") {
		t.Errorf("event %q", ev)
	}

	// Nothing due: the condition keeps what last happened, no runtime request.
	requests := w.ids.Requests()
	w.clock.Step(time.Minute)
	w.reconcile()
	if r := meta.FindStatusCondition(w.get().Status.Conditions, imv1.ConditionReady); r.Reason != sakubeconfig.ReasonKubeconfigIssued || w.ids.Requests() != requests {
		t.Errorf("an idle reconcile changed the condition to %s or called the runtime", r.Reason)
	}
}

func TestForcedRotationClearsTheAnnotation(t *testing.T) {
	s := sample()
	s.Annotations = map[string]string{imv1.AnnotationForceKubeconfigRotation: "true", "keep": "me"}
	w := newWorld(t, s)
	w.reconcile()
	w.reconcile()
	got := w.get()
	if _, ok := got.Annotations[imv1.AnnotationForceKubeconfigRotation]; ok || got.Annotations["keep"] != "me" {
		t.Errorf("annotations after a forced rotation: %v", got.Annotations)
	}
	if w.ids.TokenRequests() != 1 {
		t.Errorf("%d TokenRequests, want 1 (the first issue is the forced one)", w.ids.TokenRequests())
	}
}

func TestRefusalAndWaitingStates(t *testing.T) {
	s := sample()
	s.Spec.Rules = []imv1.AccessRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}
	w := newWorld(t, s)
	if res := w.reconcile(); res.RequeueAfter != 0 {
		t.Errorf("a refusal is requeued after %s; it waits for a change", res.RequeueAfter)
	}
	got := w.get()
	ready := meta.FindStatusCondition(got.Status.Conditions, imv1.ConditionReady)
	if got.Status.State != imv1.ServiceAccountKubeconfigStateError || ready.Reason != sakubeconfig.ReasonEscalationRefused ||
		!strings.HasPrefix(ready.Message, "spec.rules[0]: ") || got.Status.ObservedGeneration != 1 {
		t.Errorf("refused: state %s, condition %+v", got.Status.State, ready)
	}

	v := newWorld(t, sample())
	v.ids.DropKubeconfig(ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"})
	if res := v.reconcile(); res.RequeueAfter == 0 {
		t.Error("waiting for the runtime is not requeued")
	}
	if got := v.get(); got.Status.State != imv1.ServiceAccountKubeconfigStatePending || got.Status.ObservedGeneration != 0 {
		t.Errorf("waiting: state %s, observedGeneration %d", got.Status.State, got.Status.ObservedGeneration)
	}
}

func TestDeletionRemovesEverythingAndTheFinalizer(t *testing.T) {
	w := newWorld(t, sample())
	w.reconcile()
	if err := w.client.Delete(context.Background(), w.get()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	s := &imv1.ServiceAccountKubeconfig{}
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "kcp-system", Name: "lm"}, s); err == nil {
		t.Errorf("still there with finalizers %v", s.Finalizers)
	}
	if len(w.ids.Objects(ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"}, sakubeconfig.Owner{Namespace: "kcp-system", Name: "lm"})) != 0 ||
		w.store.Secrets.Exists("kcp-system", "lm-kubeconfig") {
		t.Error("runtime objects or Secret left")
	}
}

func TestDeletionAgainstAnUnreachableRuntimeSaysWhy(t *testing.T) {
	w := newWorld(t, sample())
	w.reconcile()
	w.ids.SetUnreachable(ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"}, true)
	s := w.get()
	if err := w.client.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	// The fake client stamps the deletion with the wall clock; the operator's clock follows it.
	w.clock.Set(w.get().DeletionTimestamp.Time)
	if res := w.reconcile(); res.RequeueAfter <= 0 {
		t.Error("not retried")
	}
	got := w.get()
	if r := meta.FindStatusCondition(got.Status.Conditions, imv1.ConditionReady); got.Status.State != imv1.ServiceAccountKubeconfigStateDeleting ||
		r.Reason != reasonDeleting || !strings.Contains(r.Message, "did not answer") {
		t.Errorf("deleting: state %s, condition %+v", got.Status.State, r)
	}
	w.clock.Step(time.Minute)
	w.reconcile()
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "kcp-system", Name: "lm"}, &imv1.ServiceAccountKubeconfig{}); err == nil {
		t.Error("not released after the cleanup timeout")
	}
}
