package runtimeapi

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestEnsureOfARunningServerDoesNotWaitForOtherStarts: a server start takes seconds on a busy machine and starts are
// serialised; a shoot whose server runs must get its endpoint at once, or every operation of the sandbox's
// gardenlet queues behind other shoots' starts (the lifecycle e2e saw 2-minute stalls under load).
func TestEnsureOfARunningServerDoesNotWaitForOtherStarts(t *testing.T) {
	p := NewPool(PoolOptions{Mode: ModePerShoot})
	api := &envtest.APIServer{}
	api.Address, api.Port = "127.0.0.1", "6443"
	p.servers["garden-kyma/running"] = &Server{api: api}
	p.startSem <- struct{}{} // another shoot's server is starting
	defer func() { <-p.startSem }()
	done := make(chan Endpoint, 1)
	go func() {
		ep, err := p.Ensure(t.Context(), "garden-kyma/running", true)
		if err != nil {
			t.Errorf("ensure: %v", err)
		}
		done <- ep
	}()
	select {
	case ep := <-done:
		if u, err := url.Parse(ep.URL); err != nil || u.Host != "127.0.0.1:6443" {
			t.Errorf("endpoint %q, want the running server's", ep.URL)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ensure of a shoot with a running server waited for another server's start")
	}
}

// TestEnsureStopsWaitingForAStartWhenItsContextEnds: the simulated gardenlet's workers wait here for other shoots'
// server starts; when the garden stops they must return, or its manager's grace period runs out (an e2e package
// failed after all its tests passed: "failed waiting for all runnables to end within grace period of 30s").
func TestEnsureStopsWaitingForAStartWhenItsContextEnds(t *testing.T) {
	p := NewPool(PoolOptions{Mode: ModePerShoot})
	p.startSem <- struct{}{} // another shoot's server is starting, and takes long
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Ensure(ctx, "garden-kyma/queued", true)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Ensure returned before its context ended or the other start finished: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ensure after the context ended: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ensure kept waiting for another server's start after its context ended")
	}
	if n := p.Starts(); n != 0 {
		t.Errorf("Starts() = %d after the caller gave up, want 0", n)
	}
	<-p.startSem
}
