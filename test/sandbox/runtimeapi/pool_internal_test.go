package runtimeapi

import (
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
	p.startMu.Lock() // another shoot's server is starting
	defer p.startMu.Unlock()
	done := make(chan Endpoint, 1)
	go func() {
		ep, err := p.Ensure("garden-kyma/running", true)
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
