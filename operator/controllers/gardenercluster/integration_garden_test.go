//go:build !gardenbox

package gardenercluster_test

import "testing"

// newWorld returns KCP and the Gardener side of an integration test: a real KCP and the in-memory issuer. Built
// with -tags gardenbox, the Gardener side is garden-in-a-box instead (integration_gardenbox_test.go).
func newWorld(t *testing.T) (*kcp, *garden) {
	t.Helper()
	k := startKCP(t)
	return k, fakeGarden(k)
}
