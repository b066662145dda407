package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKCPConfigFromAFileIsNotThrottled: a KCP kubeconfig named by --kubeconfig gets the client-side rate limit
// controller-runtime's loader gives the in-cluster and $KUBECONFIG ways (none), not client-go's 5 requests a second.
func TestKCPConfigFromAFileIsNotThrottled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kcp.kubeconfig")
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: kcp
  cluster:
    server: https://kcp.example:6443
contexts:
- name: kcp
  context:
    cluster: kcp
    user: op
current-context: kcp
users:
- name: op
  user:
    token: t
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := kcpConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Errorf("QPS %v, rate limiter %v; want no client-side limit (QPS < 0), as controller-runtime's loader sets", cfg.QPS, cfg.RateLimiter)
	}
	if cfg.Host != "https://kcp.example:6443" {
		t.Errorf("host %q", cfg.Host)
	}
	if _, err := kcpConfig(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing kubeconfig file was accepted")
	}
}
