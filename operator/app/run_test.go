package app

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestGardenConfigSharesOneRateLimiter: every client built from the garden configuration (cache, writes, the
// kubeconfig issuer, the health check) draws from one token bucket with the configured QPS.
func TestGardenConfigSharesOneRateLimiter(t *testing.T) {
	opts := DefaultOptions()
	opts.GardenerProject = "kyma"
	opts.GardenerQPS, opts.GardenerBurst = 7, 9
	cfg, err := gardenConfig(&rest.Config{Host: "https://garden.example"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != 7 {
		t.Fatalf("rate limiter %v, want one with QPS 7", cfg.RateLimiter)
	}
	if rest.CopyConfig(cfg).RateLimiter != cfg.RateLimiter {
		t.Error("a copy of the garden configuration (as the issuer's client makes) has its own rate limiter")
	}
	if _, err := gardenConfig(&rest.Config{Host: "https://garden.example", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, opts); err == nil {
		t.Error("a garden configuration without TLS verification was accepted")
	}
}
