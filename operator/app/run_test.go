package app

import (
	"crypto/tls"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestMetricsEndpointSpeaksHTTP1UnlessHTTP2IsEnabled: the TLS options of the HTTPS metrics endpoint offer only
// HTTP/1.1 in ALPN by default, so a client cannot negotiate HTTP/2; --enable-http2 leaves the protocols alone.
func TestMetricsEndpointSpeaksHTTP1UnlessHTTP2IsEnabled(t *testing.T) {
	for _, tc := range []struct {
		http2 bool
		want  []string
	}{{http2: false, want: []string{"http/1.1"}}, {http2: true, want: []string{"h2", "http/1.1"}}} {
		m := metricsOptions(Options{MetricsSecure: true, EnableHTTP2: tc.http2})
		c := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
		for _, o := range m.TLSOpts {
			o(c)
		}
		if !slices.Equal(c.NextProtos, tc.want) || c.MinVersion != tls.VersionTLS12 {
			t.Errorf("enable-http2=%v: ALPN %v, min TLS %x; want %v and TLS 1.2", tc.http2, c.NextProtos, c.MinVersion, tc.want)
		}
	}
}

// TestControllersUseTheClassicWorkQueue: controller-runtime v0.24's priority queue can deadlock on shutdown
// (issue 3538), which made the manager exit 1 on SIGTERM; the controllers use the classic queue until the upgrade.
func TestControllersUseTheClassicWorkQueue(t *testing.T) {
	c := controllerDefaults(DefaultOptions())
	if c.UsePriorityQueue == nil || *c.UsePriorityQueue {
		t.Errorf("UsePriorityQueue %v; want false with controller-runtime v0.24", c.UsePriorityQueue)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/controller-runtime" && !strings.HasPrefix(m.Version, "v0.24.") {
				t.Errorf("controller-runtime is %s: check that it has the fix of issue 3538 and drop the workaround", m.Version)
			}
		}
	}
}

// TestLeaderStepsDownBeforeItsLeaseExpires: a leader that cannot renew is gone before a standby may take the lease
// (LeaseDuration after the last renewal): the retry period, the renew deadline, then the release on the way out
// (LeaderElectionReleaseOnCancel) with the lease client's timeout, max(RenewDeadline/2, 1 s) in controller-runtime,
// and at least a retry period to spare for the exit and the standby's clock.
func TestLeaderStepsDownBeforeItsLeaseExpires(t *testing.T) {
	release := max(RenewDeadline/2, time.Second)
	if worst := RetryPeriod + RenewDeadline + release; worst+RetryPeriod > LeaseDuration {
		t.Errorf("a leader cut off from the KCP runs up to %s after its last renewal; the lease of %s leaves less than %s to spare",
			worst, LeaseDuration, RetryPeriod)
	}
}
