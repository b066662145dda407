package serviceaccountkubeconfig_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/test/testenv"
)

// TestIntegrationRotationInRealTime waits for rotations the way production sees them: a 10-minute token, the
// operator's own requeue timer (no clock steps, no touches), a consumer reading the Secret and listing pods every
// 50 ms for 14 minutes. It takes that long, so it runs only with E2E_REALTIME_ROTATION=1 (not in make test; the
// main test proves the same with a moved clock).
func TestIntegrationRotationInRealTime(t *testing.T) {
	if os.Getenv("E2E_REALTIME_ROTATION") != "1" {
		t.Skip("set E2E_REALTIME_ROTATION=1 to wait 14 minutes for real rotations")
	}
	w := newWorld(t)
	op := w.startOperator(t, cleanupTimeout)
	defer func() { _ = op.Stop() }()
	const rid, shoot = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "c-0c1d2e3"
	w.addRuntime(t, rid, shoot)
	req := request("realtime", "realtime-kubeconfig", "kyma-system", "realtime", 10*time.Minute, podsIn("kyma-system"))
	req.Spec.RuntimeID = rid
	created := time.Now()
	if err := w.kcp.Create(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "Ready", func() (bool, string) { return ready(w.get(t, req.Name)) })
	t.Logf("MEASURE time to Ready: %s", time.Since(created).Round(time.Millisecond))
	first := w.get(t, req.Name).Status.ExpiresAt.Time
	r := startReader(t, w, req.Spec.SecretName)
	var rotations []time.Time
	last := issuedAt(w.secret(t, req.Spec.SecretName))
	for end := time.Now().Add(14 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		if cur := issuedAt(w.secret(t, req.Spec.SecretName)); cur != last {
			rotations = append(rotations, time.Now())
			last = cur
			t.Logf("rotated %s after creation (%s before the replaced token expired); reason %s", time.Since(created).Round(time.Second),
				time.Until(first).Round(time.Second), readyReason(w.get(t, req.Name)))
			first = w.get(t, req.Name).Status.ExpiresAt.Time
		}
	}
	reads, failed := r.stop()
	t.Logf("MEASURE real-time rotation: %d rotations in 14m of 10-minute tokens, %d reads, %d failed", len(rotations), reads, failed)
	if failed != 0 || len(rotations) < 2 || readyReason(w.get(t, req.Name)) != sakubeconfig.ReasonKubeconfigRotated {
		t.Errorf("%d rotations, %d of %d reads failed; want at least 2 rotations and no failed read", len(rotations), failed, reads)
	}
}
