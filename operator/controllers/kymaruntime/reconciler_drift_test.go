package kymaruntime

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestReconcilerEarlyAccess: once Gardener advertises the kube-apiserver, the GardenerCluster is created and the
// runtime configured while Gardener still works, so Gardener's Succeeded takes the Runtime to Ready at once.
func TestReconcilerEarlyAccess(t *testing.T) {
	w := newWorld(t)
	shootName := "c-91f0e7a"
	w.reconcile(t)
	w.garden.Progress(shootName)
	rt := w.reconcile(t)
	if _, ok := w.access.GardenerCluster(rt.Namespace, rt.Name); !ok {
		t.Fatal("no GardenerCluster while Gardener is creating with the kube-apiserver advertised")
	}
	if rt.Status.State != imv1.RuntimeStatePending || readyReason(rt) != string(lifecycle.ReasonWaitingForGardener) {
		t.Fatalf("while creating: %s/%s, want Pending/WaitingForGardener", rt.Status.State, readyReason(rt))
	}
	w.access.SetKubeconfig(rt.Namespace, rt.Name)
	rt = w.reconcile(t)
	if got := w.cfg.Admins(rt.Name); len(got) != len(rt.Spec.Security.Administrators) {
		t.Fatalf("admins configured while creating: %v, want %v", got, rt.Spec.Security.Administrators)
	}
	if rt.Status.State != imv1.RuntimeStatePending {
		t.Fatalf("Ready before Gardener finished: %s", rt.Status.State)
	}
	w.garden.Succeed(shootName)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("after Gardener succeeded: %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}
	if got := w.garden.Calls()["Apply"]; got != 1 {
		t.Errorf("shoot applied %d times for one provisioning, want 1", got)
	}
}

// TestReconcilerDriftCorrection: someone else's change of the shoot is re-applied, except while patching is
// suspended; a generation Gardener bumps without changing our values is not re-applied.
func TestReconcilerDriftCorrection(t *testing.T) {
	w := newWorld(t)
	shootName := "c-91f0e7a"
	w.reconcile(t)
	w.garden.Succeed(shootName)
	w.reconcile(t)
	w.access.SetKubeconfig("kcp-system", w.req.Name)
	if rt := w.reconcile(t); rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("not Ready: %s (%s)", rt.Status.State, readyReason(rt))
	}
	applies := func() int { return w.garden.Calls()["Apply"] }
	base := applies()

	w.garden.Drift(shootName, func(s *shoot.Spec) {}) // a new generation with our values intact (e.g. seed binding)
	w.garden.Succeed(shootName)
	w.reconcile(t)
	if applies() != base {
		t.Fatalf("a generation bump without a changed value was re-applied (%d applies, want %d)", applies(), base)
	}

	// Gardener's maintenance raises the Kubernetes version: kept by the update rules, nothing to apply.
	w.garden.Drift(shootName, func(s *shoot.Spec) { s.KubernetesVersion = "9.99.9" })
	w.garden.Succeed(shootName)
	w.reconcile(t)
	if applies() != base {
		t.Fatalf("a version Gardener raised was re-applied (%d applies, want %d)", applies(), base)
	}

	w.garden.Drift(shootName, func(s *shoot.Spec) { s.Workers[0].Maximum += 5 })
	rt := w.reconcile(t)
	if applies() != base+1 {
		t.Fatalf("drift was not corrected: %d applies, want %d", applies(), base+1)
	}
	if s, _ := w.garden.Spec(shootName); s.Workers[0].Maximum != rt.Spec.Shoot.Provider.Workers[0].Maximum {
		t.Errorf("maximum after correction %d, want %d", s.Workers[0].Maximum, rt.Spec.Shoot.Provider.Workers[0].Maximum)
	}

	metav1.SetMetaDataAnnotation(&rt.ObjectMeta, imv1.AnnotationSuspendPatchReconciliation, "true")
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	w.garden.Succeed(shootName)
	w.garden.Drift(shootName, func(s *shoot.Spec) { s.Workers[0].Maximum += 5 })
	w.reconcile(t)
	if applies() != base+1 {
		t.Errorf("drift was corrected while patching is suspended")
	}
}

// TestReconcilerAdoptsPredecessorShoot: a shoot the previous infrastructure manager created for this runtime is
// taken over (marked, then updated like any other); with patching suspended it is marked but left unchanged.
func TestReconcilerAdoptsPredecessorShoot(t *testing.T) {
	for _, suspended := range []bool{false, true} {
		t.Run(map[bool]string{false: "applied", true: "suspended"}[suspended], func(t *testing.T) {
			w := newWorld(t)
			rt := &imv1.Runtime{}
			if err := w.kcp.Get(t.Context(), w.req.NamespacedName, rt); err != nil {
				t.Fatal(err)
			}
			if suspended {
				metav1.SetMetaDataAnnotation(&rt.ObjectMeta, imv1.AnnotationSuspendPatchReconciliation, "true")
				if err := w.kcp.Update(t.Context(), rt); err != nil {
					t.Fatal(err)
				}
			}
			old := shoot.Spec{Name: rt.Spec.Shoot.Name, KubernetesVersion: "1.32.4",
				Workers: []shoot.WorkerSpec{{Worker: shoot.Worker{Name: "cpu-worker-0", Minimum: 1, Maximum: 1}}}}
			w.garden.PutPredecessor(old, rt.Name)

			w.reconcile(t) // adopts
			s, _ := w.garden.Get(t.Context(), rt.Spec.Shoot.Name, ports.ReadLive)
			if !s.OwnedBy(rt.Name) {
				t.Fatalf("shoot not adopted: marks %+v", s.Marks)
			}
			rt = w.reconcile(t)
			if readyReason(rt) == string(lifecycle.ReasonShootNameTaken) {
				t.Fatalf("the predecessor's shoot was taken for a name clash: %s", rt.Status.State)
			}
			applied := w.garden.Calls()["Apply"]
			got, _ := w.garden.Spec(rt.Spec.Shoot.Name)
			if suspended {
				if applied != 0 || readyReason(rt) != string(lifecycle.ReasonPatchSuspended) {
					t.Errorf("suspended: %d applies, reason %s; want 0 and %s", applied, readyReason(rt), lifecycle.ReasonPatchSuspended)
				}
				return
			}
			if applied != 1 || got.Workers[0].Maximum != rt.Spec.Shoot.Provider.Workers[0].Maximum {
				t.Errorf("after adoption: %d applies, maximum %d; want 1 apply of the Runtime's maximum %d", applied, got.Workers[0].Maximum, rt.Spec.Shoot.Provider.Workers[0].Maximum)
			}
		})
	}
}
