package kymaruntime

import (
	"strings"
	"testing"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// drainEvents returns the events recorded so far, as the fake recorder writes them ("<type> <reason> <message>").
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

// reasons returns the type and reason of each event.
func reasons(evs []string) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		f := strings.Fields(e)
		out = append(out, strings.Join(f[:min(2, len(f))], " "))
	}
	return out
}

// TestProvisioningEvents pins the events of a provisioning in its normal course (issue 29): the shoot applied and
// Ready, nothing for the steps in between (Gardener working, GardenerCluster created, waiting for the kubeconfig),
// which the Ready condition tells. Leaving Ready and problems while Pending keep their events.
func TestProvisioningEvents(t *testing.T) {
	w := newWorld(t)
	shootName := "c-91f0e7a"
	w.reconcile(t) // shoot created: Pending/WaitingForGardener
	w.garden.Progress(shootName)
	w.reconcile(t) // kube-apiserver advertised: GardenerCluster created meanwhile
	w.garden.Succeed(shootName)
	rt := w.reconcile(t) // WaitingForKubeconfig
	if readyReason(rt) != "WaitingForKubeconfig" {
		t.Fatalf("after Gardener succeeded: %s, want WaitingForKubeconfig", readyReason(rt))
	}
	w.access.SetKubeconfig(rt.Namespace, rt.Name)
	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateReady {
		t.Fatalf("after kubeconfig: %s (%s), want Ready", rt.Status.State, readyReason(rt))
	}
	if got, want := strings.Join(reasons(w.drainEvents()), ", "), "Normal ShootApplied, Normal Ready"; got != want {
		t.Errorf("events of a provisioning: %s, want %s", got, want)
	}

	// An update leaves Ready (an event), Gardener's retry is a problem (an event), Ready again (an event).
	rt.Spec.Shoot.Provider.Workers[0].Maximum++
	rt.Generation = 2
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	w.reconcile(t)
	w.garden.Fail(shootName, "quota", "ERR_INFRA_QUOTA_EXCEEDED")
	w.reconcile(t)
	w.garden.Succeed(shootName)
	w.reconcile(t)
	if got, want := strings.Join(reasons(w.drainEvents()), ", "), "Normal ShootApplied, Normal WaitingForGardener, Normal GardenerRetryScheduled, Normal Ready"; got != want {
		t.Errorf("events of an update with a retryable failure: %s, want %s", got, want)
	}
}
