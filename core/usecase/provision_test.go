package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/usecase"
)

// TestNotReadyOnAnExpiredKubeconfig: Ready promises KEB a usable kubeconfig; an expired one is no kubeconfig.
func TestNotReadyOnAnExpiredKubeconfig(t *testing.T) {
	clock := fake.NewClock(reapStart)
	garden, access := fake.NewGarden(clock), fake.NewAccessObjects()
	p := &usecase.Provisioner{Shoots: garden, Seeds: garden, Access: access, Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy()}
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
	pass := func() lifecycle.Decision {
		t.Helper()
		res, err := p.Provision(context.Background(), req, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		req.Configured = res.Configured
		return res.Decision
	}
	pass()
	garden.Succeed("c-1")
	access.SetKubeconfigExpiring(modelNamespace, "rt-1", clock.Now().Add(time.Hour))
	if d := pass(); d.State != lifecycle.StateReady {
		t.Fatalf("with a valid kubeconfig: %s %s (%s)", d.State, d.Reason, d.Message)
	}
	clock.Step(2 * time.Hour)
	if d := pass(); d.State == lifecycle.StateReady || d.Reason != lifecycle.ReasonWaitingForKubeconfig {
		t.Fatalf("with an expired kubeconfig: %s %s; want not Ready, %s", d.State, d.Reason, lifecycle.ReasonWaitingForKubeconfig)
	}
}
