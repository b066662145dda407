package kymaruntime

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// foreignFinalizer is a finalizer of another component on the Runtime: never the operator's to remove.
const foreignFinalizer = "example.kyma-project.io/keep"

// previousManagersRuntime turns the world's Runtime into one as the previous infrastructure manager leaves it: its
// finalizer (its api/v1 Finalizer), Ready, provisioning completed, and its shoot created by that manager.
func previousManagersRuntime(t *testing.T, w *world, extraFinalizers ...string) *imv1.Runtime {
	t.Helper()
	rt := &imv1.Runtime{}
	if err := w.kcp.Get(t.Context(), w.req.NamespacedName, rt); err != nil {
		t.Fatal(err)
	}
	rt.Finalizers = append([]string{PreviousFinalizer}, extraFinalizers...)
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt.Status.State, rt.Status.ProvisioningCompleted = imv1.RuntimeStateReady, true
	if err := w.kcp.Status().Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	w.garden.PutPredecessor(shoot.Spec{Name: rt.Spec.Shoot.Name, KubernetesVersion: "1.32.4",
		Workers: []shoot.WorkerSpec{{Worker: shoot.Worker{Name: "cpu-worker-0", Minimum: 1, Maximum: 1}}}}, rt.Name)
	return rt
}

// checkShootKept: the shoot is adopted, hibernated and marked for the deletion window, not deleted.
func checkShootKept(t *testing.T, w *world, rt *imv1.Runtime) {
	t.Helper()
	s, err := w.garden.Get(t.Context(), rt.Spec.Shoot.Name, ports.ReadLive)
	if err != nil {
		t.Fatal(err)
	}
	if !s.HibernationRequested || s.Marks.PendingDeletion == nil || s.Deleting() || s.Marks.PendingDeletion.RuntimeID != rt.Name {
		t.Fatalf("shoot after the runtime went: hibernation %v, record %+v, deleting %v", s.HibernationRequested, s.Marks.PendingDeletion, s.Deleting())
	}
}

// A Runtime of the previous manager deleted before the operator ever reconciled it (the switch-over happened
// while KEB deprovisioned it): it carries only the previous finalizer, and its shoot was never adopted. The
// operator deletes it as its own: the shoot is adopted and marked, and the Runtime goes.
func TestPreviousManagersRuntimeDeletedBeforeItsFirstReconcileGoes(t *testing.T) {
	w := newWorld(t)
	rt := previousManagersRuntime(t, w)
	if err := w.kcp.Delete(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	var got *imv1.Runtime
	for range 5 {
		if got = w.reconcile(t); got == nil {
			break
		}
	}
	if got != nil {
		t.Fatalf("runtime still there: state %s, finalizers %v", got.Status.State, got.Finalizers)
	}
	checkShootKept(t, w, rt)
	if w.garden.Calls()["Apply"] != 0 {
		t.Error("the shoot of a deleted runtime was applied")
	}
}

// A Runtime of the previous manager the operator took over (both finalizers) and that another component also holds:
// until the operator's deletion is done both finalizers stay; then both go, in one write, and the other
// component's stays.
func TestPreviousFinalizerGoesWithOursAndNoOtherFinalizer(t *testing.T) {
	w := newWorld(t)
	previousManagersRuntime(t, w, foreignFinalizer)
	w.reconcile(t) // adopts the shoot, adds the operator's finalizer
	rt := w.reconcile(t)
	if !slices.Contains(rt.Finalizers, Finalizer) || !slices.Contains(rt.Finalizers, PreviousFinalizer) {
		t.Fatalf("after adoption: finalizers %v, want the operator's and the previous manager's", rt.Finalizers)
	}
	w.deleteWithAccessRemovalFailing(t, rt)
	held := w.reconcileFailing(t)
	if !slices.Contains(held.Finalizers, PreviousFinalizer) || !slices.Contains(held.Finalizers, Finalizer) {
		t.Fatalf("before the deletion is done: finalizers %v, want both kept", held.Finalizers)
	}
	w.access.Err = nil
	var got *imv1.Runtime
	for range 5 {
		got = w.reconcile(t)
		if !slices.Contains(got.Finalizers, Finalizer) {
			break
		}
	}
	if want := []string{foreignFinalizer}; !slices.Equal(got.Finalizers, want) {
		t.Fatalf("after the deletion: finalizers %v, want %v", got.Finalizers, want)
	}
	checkShootKept(t, w, rt)
}

// A never-reconciled Runtime of the previous manager whose deletion fails half-way, then the operator restarts:
// nothing is added to the deleting Runtime (the API server refuses new finalizers then), the previous finalizer
// holds it, and the restarted operator finishes the deletion.
func TestPreviousManagersRuntimeDeletionSurvivesARestart(t *testing.T) {
	w := newWorld(t)
	rt := previousManagersRuntime(t, w)
	w.deleteWithAccessRemovalFailing(t, rt)
	held := w.reconcileFailing(t)
	if held == nil || !slices.Equal(held.Finalizers, []string{PreviousFinalizer}) {
		t.Fatalf("while the deletion fails: %v, want the Runtime held by the previous finalizer alone", held)
	}
	w.access.Err = nil
	teardown := w.r.Hooks.(*hooks).teardown // the KCP's and the garden's records survive a restart
	restarted, err := NewReconciler(w.kcp, w.kcp, w.clock, w.recorder, NewMetrics(prometheus.NewRegistry()), w.provision, teardown, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.r = restarted
	var got *imv1.Runtime
	for range 5 {
		if got = w.reconcile(t); got == nil {
			break
		}
	}
	if got != nil {
		t.Fatalf("runtime still there after the restart: finalizers %v", got.Finalizers)
	}
	checkShootKept(t, w, rt)
}

// Adoption runs again and again (every reconcile of a live Runtime): the finalizers are the previous one and the
// operator's, once each, and nothing else is written to them.
func TestAdoptionRerunsLeaveTheFinalizersAlone(t *testing.T) {
	w := newWorld(t)
	previousManagersRuntime(t, w, foreignFinalizer)
	var rt *imv1.Runtime
	for range 4 {
		rt = w.reconcile(t)
	}
	if want := []string{PreviousFinalizer, foreignFinalizer, Finalizer}; !slices.Equal(rt.Finalizers, want) {
		t.Fatalf("finalizers %v, want %v", rt.Finalizers, want)
	}
}
