package kymaruntime

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
)

type world struct {
	r         *Reconciler
	provision *usecase.Provisioner
	guard     *fake.DeletionGuard
	runtimes  *fake.Runtimes
	restorer  *usecase.Restorer
	garden    *fake.Garden
	access    *fake.AccessObjects
	cfg       *fake.RuntimeConfigurator
	clock     *fake.Clock
	kcp       client.Client
	req       ctrl.Request
	recorder  *events.FakeRecorder
}

func newWorld(t *testing.T) *world {
	t.Helper()
	raw, err := os.ReadFile("../../api/v1/testdata/keb-runtime-trial.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.Unmarshal(raw, rt); err != nil {
		t.Fatal(err)
	}
	rt.Labels[imv1.LabelBrokerPlanName] = "azure" // a plan with a window
	rt.Generation = 1
	opCfg, err := config.Load("../../config/testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	kcp := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(rt).WithStatusSubresource(&imv1.Runtime{}).Build()
	clock := fake.NewClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	w := &world{garden: fake.NewGarden(clock), access: fake.NewAccessObjects(), cfg: fake.NewRuntimeConfigurator(), clock: clock, kcp: kcp,
		req: ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rt)}, recorder: events.NewFakeRecorder(100)}
	policy := deletion.Policy{DefaultWindow: 72 * time.Hour, MaxWindow: 30 * 24 * time.Hour, Budget: deletion.DefaultBudget()}
	w.guard = &fake.DeletionGuard{}
	w.runtimes = fake.NewRuntimes()
	w.provision = &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: w.access, Configurator: w.cfg, Guard: w.guard,
		Config: opCfg.ShootConfig(), Policy: policy}
	r, err := NewReconciler(kcp, kcp, clock, w.recorder, NewMetrics(prometheus.NewRegistry()), w.provision,
		&usecase.Teardown{Shoots: w.garden, Access: w.access, Records: fake.NewDeletionRecords(), Policy: policy}, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.r = r
	w.restorer = &usecase.Restorer{Shoots: w.garden, Runtimes: &kube.RuntimeRegistry{Live: kcp, Writer: kcp, Namespaces: []string{"kcp-system"}},
		Policy: policy, DefaultNamespace: "kcp-system"}
	return w
}

// reconcile runs one pass, which must not fail, and returns the Runtime as stored (nil when gone).
func (w *world) reconcile(t *testing.T) *imv1.Runtime {
	t.Helper()
	return w.pass(t, false)
}

// reconcileFailing runs one pass that must fail (the test injected the failure) and returns the Runtime as stored.
func (w *world) reconcileFailing(t *testing.T) *imv1.Runtime {
	t.Helper()
	return w.pass(t, true)
}

func (w *world) pass(t *testing.T, wantErr bool) *imv1.Runtime {
	t.Helper()
	if _, err := w.r.Reconcile(t.Context(), w.req); (err != nil) != wantErr {
		t.Errorf("reconcile returned %v, want an error: %v", err, wantErr)
	}
	rt := &imv1.Runtime{}
	if err := w.kcp.Get(t.Context(), w.req.NamespacedName, rt); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return rt
}

// deleteWithAccessRemovalFailing deletes the Runtime while removing its access fails (the KCP unavailable): its
// deletion cannot finish until w.access.Err is cleared.
func (w *world) deleteWithAccessRemovalFailing(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	if err := w.kcp.Delete(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	w.access.Err = func(method string) error {
		if method == "Remove" {
			return errors.New("KCP unavailable")
		}
		return nil
	}
}

func readyReason(rt *imv1.Runtime) string {
	for _, c := range rt.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return c.Reason
		}
	}
	return ""
}

func TestReconcilerProvisionUpdateDelete(t *testing.T) {
	w := newWorld(t)
	shootName := "c-91f0e7a"

	rt := w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStatePending || readyReason(rt) != string(lifecycle.ReasonWaitingForGardener) {
		t.Fatalf("after create: %s/%s, want Pending/WaitingForGardener", rt.Status.State, readyReason(rt))
	}
	if _, ok := w.garden.Spec(shootName); !ok {
		t.Fatal("the shoot was not applied")
	}

	w.garden.Succeed(shootName)
	rt = w.reconcile(t)
	if readyReason(rt) != string(lifecycle.ReasonWaitingForKubeconfig) {
		t.Fatalf("after Gardener succeeded: %s, want WaitingForKubeconfig", readyReason(rt))
	}
	if _, ok := w.access.GardenerCluster(rt.Namespace, rt.Name); !ok {
		t.Fatal("no GardenerCluster")
	}

	w.access.SetKubeconfig(rt.Namespace, rt.Name)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady || !rt.Status.ProvisioningCompleted {
		t.Fatalf("after kubeconfig: %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}
	if got := w.cfg.Admins(rt.Name); len(got) != len(rt.Spec.Security.Administrators) {
		t.Errorf("admins in runtime %v, want %v", got, rt.Spec.Security.Administrators)
	}
	// The conditions KEB's and SRE's tooling match on, with the previous system's reasons, and the record of the
	// configuration the next pass compares with.
	for typ, reason := range map[string]string{lifecycle.ConditionProvisioned: "ShootCreationCompleted", lifecycle.ConditionKubeconfigReady: "GardenerClusterCRReady",
		lifecycle.ConditionKymaSystemNSCreated: "KymaSystemNSReady", lifecycle.ConditionOidcAndConfigMapConfigured: "OidcAndConfigMapsConfigured",
		lifecycle.ConditionConfigured: "AdministratorsConfigured"} {
		c := meta.FindStatusCondition(rt.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || c.ObservedGeneration != rt.Generation {
			t.Errorf("condition %s: %+v, want True/%s", typ, c, reason)
		}
	}
	if meta.FindStatusCondition(rt.Status.Conditions, "RuntimeConfigured") != nil || meta.FindStatusCondition(rt.Status.Conditions, lifecycle.ConditionBootstrapped) != nil {
		t.Errorf("unexpected conditions %+v", rt.Status.Conditions)
	}
	if rc := rt.Status.RuntimeConfiguration; rc == nil || rc.Hash == "" || rc.AppliedAt == nil || rc.ShootReconciledAt == nil {
		t.Errorf("status.runtimeConfiguration %+v", rc)
	}
	if _, _, ok := w.cfg.ConfigMap(rt.Name, "kyma-system", "kyma-provisioning-info"); !ok {
		t.Error("no kyma-provisioning-info ConfigMap in the runtime")
	}
	writes := w.cfg.Writes
	applies := w.garden.Calls()["Apply"]
	record := rt.Status.ShootInSync
	if record == "" {
		t.Error("no record of the shoot found in sync in the status")
	}
	rv := rt.ResourceVersion
	rt = w.reconcile(t)
	if w.garden.Calls()["Apply"] != applies {
		t.Error("a Ready runtime without changes was applied again")
	}
	// The record goes back to the comparison (a restarted operator answers from it) and, unchanged, writes nothing.
	if got := w.garden.InSyncRecordGiven(shootName); got != record {
		t.Errorf("the comparison was given the record %q, want the status's %q", got, record)
	}
	if rt.Status.ShootInSync != record || rt.ResourceVersion != rv {
		t.Errorf("a pass without changes changed the record (%q -> %q) or wrote the status (%s -> %s)", record, rt.Status.ShootInSync, rv, rt.ResourceVersion)
	}
	// A status without the record (written by a version that kept none): the record alone is worth no write, it
	// goes with the next write for another reason (here Gardener's next report).
	rt.Status.ShootInSync = ""
	if err := w.kcp.Status().Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rv = rt.ResourceVersion
	if rt = w.reconcile(t); rt.ResourceVersion != rv || rt.Status.ShootInSync != "" {
		t.Errorf("the record alone was written: %s -> %s, record %q", rv, rt.ResourceVersion, rt.Status.ShootInSync)
	}
	w.clock.Step(time.Hour)
	w.garden.Succeed(shootName)
	if rt = w.reconcile(t); rt.ResourceVersion == rv || rt.Status.ShootInSync != record {
		t.Errorf("Gardener's report was written without the record: %s -> %s, record %q, want %q", rv, rt.ResourceVersion, rt.Status.ShootInSync, record)
	}
	if w.cfg.Writes != writes {
		t.Error("a Ready runtime without changes was configured again")
	}

	// Spec change: leaves Ready in the same reconcile, back after Gardener.
	rt.Spec.Shoot.Provider.Workers[0].Maximum++
	rt.Generation = 2
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStatePending {
		t.Fatalf("after spec change: %s, want Pending", rt.Status.State)
	}
	w.garden.Succeed(shootName)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("after update reconciled: %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}

	// Deletion: access gone, shoot hibernated and marked, Runtime NotFound. A failing step first: the Runtime
	// stays and reports the previous system's Deprovisioned condition.
	w.deleteWithAccessRemovalFailing(t, rt)
	failing := w.reconcileFailing(t)
	if c := meta.FindStatusCondition(failing.Status.Conditions, lifecycle.ConditionDeprovisioned); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != lifecycle.ReasonGardenerError || !strings.Contains(c.Message, "KCP unavailable") {
		t.Errorf("condition %s while removing access fails: %+v", lifecycle.ConditionDeprovisioned, c)
	}
	w.access.Err = nil
	if got := w.reconcile(t); got != nil {
		t.Fatalf("runtime still there after deletion reconcile: finalizers %v", got.Finalizers)
	}
	s, _ := w.garden.Get(t.Context(), shootName, ports.ReadLive)
	if !s.HibernationRequested || s.Marks.PendingDeletion == nil || s.Deleting() {
		t.Fatalf("shoot after runtime deletion: hibernation %v, record %+v, deleting %v", s.HibernationRequested, s.Marks.PendingDeletion, s.Deleting())
	}
	if want := w.clock.Now().Add(72 * time.Hour); !s.Marks.PendingDeletion.DueAt.Equal(want) {
		t.Errorf("due %s, want %s", s.Marks.PendingDeletion.DueAt, want)
	}
	if _, ok := w.access.GardenerCluster(rt.Namespace, rt.Name); ok {
		t.Error("GardenerCluster survived the runtime")
	}
	doc, _ := w.garden.RestoreSpec(t.Context(), shootName)
	if len(doc) == 0 {
		t.Fatal("no restore document recorded")
	}

	// Restore: the Runtime comes back and takes the shoot over.
	if _, err := w.restorer.Restore(t.Context(), shootName, w.clock.Now(), false); err != nil {
		t.Fatalf("restore: %v", err)
	}
	w.reconcile(t) // cancels the deletion
	rt = w.reconcile(t)
	s, _ = w.garden.Get(t.Context(), shootName, ports.ReadLive)
	if s.Marks.PendingDeletion != nil || s.HibernationRequested {
		t.Fatalf("after restore the shoot is still pending deletion: %+v", s.Marks)
	}
	w.garden.Succeed(shootName)
	w.access.SetKubeconfig(rt.Namespace, rt.Name)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("restored runtime: %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}
}

func TestReconcilerNonRetryableGardenerFailure(t *testing.T) {
	w := newWorld(t)
	w.reconcile(t)
	w.garden.Fail("c-91f0e7a", "credentials rejected by AWS", shootstate.ErrInfraUnauthenticated)
	rt := w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateFailed || readyReason(rt) != string(lifecycle.ReasonGardenerFailed) {
		t.Fatalf("state %s/%s, want Failed/GardenerFailed", rt.Status.State, readyReason(rt))
	}
	if len(rt.Status.ShootLastErrors) != 1 || rt.Status.ShootLastErrors[0].Codes[0] != "ERR_INFRA_UNAUTHENTICATED" {
		t.Errorf("last errors not mirrored: %+v", rt.Status.ShootLastErrors)
	}
}

func TestReconcilerRetryableGardenerFailureRecovers(t *testing.T) {
	w := newWorld(t)
	w.reconcile(t)
	w.garden.Fail("c-91f0e7a", "quota", shootstate.ErrInfraQuotaExceeded)
	rt := w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStatePending || readyReason(rt) != string(lifecycle.ReasonGardenerRetryScheduled) {
		t.Fatalf("state %s/%s, want Pending/GardenerRetryScheduled", rt.Status.State, readyReason(rt))
	}
	w.clock.Step(time.Minute)
	w.reconcile(t)
	if w.garden.Calls()["RequestRetry"] != 1 {
		t.Fatalf("retry requests: %d, want 1", w.garden.Calls()["RequestRetry"])
	}
	w.garden.Succeed("c-91f0e7a")
	w.access.SetKubeconfig(rt.Namespace, rt.Name)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("state %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}
}

// TestReconcilerRetriesOfOneSpecCount: Gardener makes every retry of a Failed shoot a new generation. The attempts
// of one spec must still add up, or a failure without an error code is retried forever with the first backoff.
func TestReconcilerRetriesOfOneSpecCount(t *testing.T) {
	w := newWorld(t)
	w.reconcile(t)
	var rt *imv1.Runtime
	for round := 0; round < 2*lifecycle.DefaultMaxUnknownRetries+2; round++ {
		w.garden.Fail("c-91f0e7a", "something went wrong") // no error code: retried a few times, then given up
		rt = w.reconcile(t)
		if rt.Status.State == imv1.RuntimeStateFailed {
			break
		}
		w.clock.Step(time.Hour) // past any backoff
		w.reconcile(t)
	}
	if rt.Status.State != imv1.RuntimeStateFailed || readyReason(rt) != string(lifecycle.ReasonGardenerFailed) {
		t.Fatalf("state %s/%s after %d retry requests, want Failed/GardenerFailed after %d", rt.Status.State, readyReason(rt),
			w.garden.Calls()["RequestRetry"], lifecycle.DefaultMaxUnknownRetries)
	}
	if got := w.garden.Calls()["RequestRetry"]; got != lifecycle.DefaultMaxUnknownRetries {
		t.Errorf("retry requests: %d, want %d", got, lifecycle.DefaultMaxUnknownRetries)
	}
}
