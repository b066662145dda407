package serviceaccountkubeconfig_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/test/testenv"
)

// rulesInPlace adds a rule to lifecycle-manager's request: applied in place, the kubeconfig stays the same and valid.
func (sc *scenario) rulesInPlace(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	before := w.secret(t, lmSecret)
	s := w.get(t, lmName)
	s.Spec.Rules = append(s.Spec.Rules, imv1.AccessRule{Namespaces: []string{"kyma-system"}, APIGroups: []string{""},
		Resources: []string{"configmaps"}, Verbs: []string{"list"}})
	if err := w.kcp.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "rules applied", func() (bool, string) {
		s := w.get(t, lmName)
		ok, desc := ready(s)
		return ok && readyReason(s) == sakubeconfig.ReasonRulesApplied, desc
	})
	after := w.secret(t, lmSecret)
	if after.ResourceVersion != before.ResourceVersion {
		t.Error("a rule change rewrote the kubeconfig Secret")
	}
	c, _ := consumer(after.Data["config"])
	testenv.Eventually(t, 10*time.Second, "the old kubeconfig lists configmaps", func() (bool, string) {
		_, err := c.CoreV1().ConfigMaps("kyma-system").List(ctx, metav1.ListOptions{})
		return err == nil, errString(err)
	})
}

// rotation moves the operator's clock past the rotation point, then forces a rotation, while a reader uses the
// kubeconfig.
func (sc *scenario) rotation(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	reader := startReader(t, w, lmSecret)
	first := w.secret(t, lmSecret)
	// The operator's clock passes the rotation point of the 10-minute token (60% to 65% of it); the token itself
	// is still valid in real time. A touch of the object makes the operator look now instead of in six minutes.
	w.clock.Step(7 * time.Minute)
	touch(t, w, lmName)
	testenv.Eventually(t, time.Minute, "rotated", func() (bool, string) {
		s := w.get(t, lmName)
		return issuedAt(w.secret(t, lmSecret)) != issuedAt(first) && readyReason(s) == sakubeconfig.ReasonKubeconfigRotated, readyReason(s)
	})
	rotated := w.secret(t, lmSecret)
	sc.tokens = append(sc.tokens, tokenOf(t, rotated.Data["config"]))
	if tokenOf(t, rotated.Data["config"]) == tokenOf(t, first.Data["config"]) {
		t.Error("rotation kept the token")
	}
	s := w.get(t, lmName)
	s.Annotations = map[string]string{imv1.AnnotationForceKubeconfigRotation: "true"}
	if err := w.kcp.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "forced rotation", func() (bool, string) {
		s := w.get(t, lmName)
		_, still := s.Annotations[imv1.AnnotationForceKubeconfigRotation]
		return tokenOf(t, w.secret(t, lmSecret).Data["config"]) != tokenOf(t, rotated.Data["config"]) && !still, readyReason(s)
	})
	sc.tokens = append(sc.tokens, tokenOf(t, w.secret(t, lmSecret).Data["config"]))
	// The reader goes on with the new kubeconfig.
	after := reader.reads.Load()
	testenv.Eventually(t, 30*time.Second, "20 more reads with the forced kubeconfig", func() (bool, string) {
		n := reader.reads.Load()
		return n >= after+20, fmt.Sprintf("%d reads", n-after)
	})
	reads, failed := reader.stop()
	t.Logf("MEASURE concurrent reader during 2 rotations: %d reads, %d failed", reads, failed)
	if failed != 0 || reads < 20 {
		t.Errorf("%d of %d reads failed (want 0 of at least 20)", failed, reads)
	}
}

// restart restarts the operator and counts the requests it makes to the runtime.
func (sc *scenario) restart(t *testing.T) {
	w := sc.w
	if err := sc.op.Stop(); err != nil {
		t.Fatal(err)
	}
	tokensBefore, resourcesBefore := w.tokenRequests(t, shootName)
	reconciles, err := testenv.Reconciles(serviceaccountkubeconfig.Name)
	if err != nil {
		t.Fatal(err)
	}
	sc.op = w.startOperator(t, cleanupTimeout)
	// The restarted operator looks at both objects once its caches are synced; then its queue runs dry.
	testenv.WaitReconciled(t, serviceaccountkubeconfig.Name, reconciles+2, time.Minute)
	sc.op.WaitIdle(t, serviceaccountkubeconfig.Name, time.Minute)
	for _, name := range []string{lmName, kebName} {
		if ok, desc := ready(w.get(t, name)); !ok {
			t.Errorf("%s after the restart: %s", name, desc)
		}
	}
	tokensAfter, resourcesAfter := w.tokenRequests(t, shootName)
	t.Logf("MEASURE restart: %d TokenRequests, %d other requests to the runtime API server by anyone (the test's metric reads excluded)",
		tokensAfter-tokensBefore, resourcesAfter-resourcesBefore-(tokensAfter-tokensBefore))
	if tokensAfter != tokensBefore {
		t.Errorf("%d TokenRequests on restart, want 0", tokensAfter-tokensBefore)
	}
	if resourcesAfter != resourcesBefore {
		t.Errorf("%d requests to the runtime on restart, want 0", resourcesAfter-resourcesBefore)
	}
}
