package runtime_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// maxGardenRequestsPerRuntime bounds the operator's Gardener requests per provisioned runtime (every verb: the
// shoot's apply, the admin kubeconfig, the reads; issue 41).
const maxGardenRequestsPerRuntime = 7

// TestIntegrationRequestsPerProvisioning provisions a few KEB-shaped Runtimes (one per plan the benchmark uses) on
// garden-in-a-box and bounds the requests the operator sent per runtime to the KCP and to Gardener, counted by
// verb and resource: what `make bench-runtime` measures at 50 runtimes, held in every `make test` (issue 41.4).
// Counts, not times: the machine's load changes only the order in which things happen, which the bounds allow for.
func TestIntegrationRequestsPerProvisioning(t *testing.T) {
	if testing.Short() {
		t.Skip("garden-in-a-box")
	}
	const n = 4
	w := provision(t, n, 300*time.Millisecond, 3*time.Second, func() {})
	// In-flight reconciles of the last Ready runtimes finish before the requests are counted.
	for _, c := range []string{"runtime", "gardenercluster"} {
		w.op.WaitIdle(t, c, time.Minute)
	}
	for _, api := range []struct {
		name string
		max  float64
	}{{"kcp", maxKCPRequestsPerRuntime}, {"garden", maxGardenRequestsPerRuntime}} {
		perRuntime, byVerb := w.tr.perRuntime(api.name, n)
		t.Logf("%s requests per provisioned runtime: %.2f%s", api.name, perRuntime, byVerb)
		// Discovery and the lists and watches of the caches are the process's, not a runtime's: a few runtimes
		// would carry a share that fifty do not. They are bounded on their own.
		shared, own, conflicts := countRequests(w.tr.snapshot(api.name))
		if conflicts > 0 {
			t.Logf("%d %s requests met a concurrent write (409, or a failed JSON patch test); each and its fresh read are not counted against the bound", conflicts, api.name)
		}
		if conflicts > n {
			t.Errorf("%d %s conflicts while %d runtimes were provisioned, more than one per runtime", conflicts, api.name, n)
		}
		if got := float64(own-2*conflicts) / n; got > api.max {
			t.Errorf("%.2f %s requests per provisioned runtime besides discovery, lists, watches and conflict retries, more than %g: see the breakdown above", got, api.name, api.max)
		}
		if shared > maxSharedRequests {
			t.Errorf("%d %s discovery, list and watch requests while %d runtimes were provisioned, more than %d", shared, api.name, n, maxSharedRequests)
		}
	}
}

// maxSharedRequests bounds the discovery, list and watch requests to one API server during the provisioning (a
// watch the server ends is opened again; a cache that lists per runtime would exceed it).
const maxSharedRequests = 6

// countRequests splits calls into the process's (discovery, lists and watches), the rest, and the conflicts among
// the rest. A write that met a concurrent write costs the refused request and a fresh read before the retry: timing
// (the simulated gardenlet writes a new shoot several times a second), not the course of a provisioning, so the
// bound leaves those two out and bounds the conflicts on their own. A conflict is a 409, or the 422 of a JSON patch
// whose test failed (the managedFields hand-over tests the entry's position instead of pinning a resourceVersion).
func countRequests(calls []call) (shared, own, conflicts int) {
	for _, c := range calls {
		switch {
		case strings.HasPrefix(c.key, "GET /") || strings.HasPrefix(c.key, "list ") || strings.HasPrefix(c.key, "watch "):
			shared++
		case c.code == http.StatusConflict || c.code == http.StatusUnprocessableEntity && strings.HasPrefix(c.key, "patch(json-patch) "):
			conflicts++
			own++
		default:
			own++
		}
	}
	return shared, own, conflicts
}
