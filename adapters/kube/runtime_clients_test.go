package kube

import (
	"fmt"
	"testing"
	"time"
)

func TestClientCacheDropsIdleAndLeastRecentlyUsedClients(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	built := map[string]int{}
	c := newClientCache(3, 2*time.Minute, func() time.Time { return now }, func(id string, kc []byte) (*runtimeClient, error) {
		built[id]++
		return newRuntimeClient(id, kc, time.Second)
	})
	kc := func(id string) []byte {
		return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s.example:443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, id)
	}
	get := func(id string) {
		t.Helper()
		if _, err := c.get(id, kc(id)); err != nil {
			t.Fatal(err)
		}
	}
	get("a")
	now = now.Add(time.Minute)
	get("b")
	get("a") // reused: a is now the most recently used
	if built["a"] != 1 || c.len() != 2 {
		t.Fatalf("built %v, %d kept", built, c.len())
	}
	get("c")
	get("d") // over max: b, the least recently used, goes
	if c.len() != 3 {
		t.Fatalf("%d kept, want 3", c.len())
	}
	get("b")
	if built["b"] != 2 {
		t.Fatalf("b built %d times, want 2 (evicted by max)", built["b"])
	}
	now = now.Add(2*time.Minute + time.Second)
	get("e") // every other client was last used more than 2 minutes ago
	if c.len() != 1 {
		t.Fatalf("%d kept after everything else idled, want 1", c.len())
	}
	get("a")
	if built["a"] != 2 {
		t.Fatalf("a built %d times, want 2 (evicted as idle)", built["a"])
	}
}
