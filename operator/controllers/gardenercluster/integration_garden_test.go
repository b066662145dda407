package gardenercluster_test

import "testing"

// newGarden returns the Gardener side of an integration test.
func newGarden(t *testing.T, k *kcp) *garden {
	t.Helper()
	return fakeGarden(k)
}
