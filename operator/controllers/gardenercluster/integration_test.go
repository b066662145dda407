package gardenercluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

func secretKey(runtimeID string) types.NamespacedName {
	return types.NamespacedName{Namespace: "kcp-system", Name: "kubeconfig-" + runtimeID}
}

func readKubeconfig(ctx context.Context, c client.Client, runtimeID string) ([]byte, error) {
	var s corev1.Secret
	if err := c.Get(ctx, secretKey(runtimeID), &s); err != nil {
		return nil, err
	}
	return s.Data["config"], nil
}

// poll is how often the tests look at the API server while they wait: testenv.Eventually's interval. (At 20 ms the
// waits of 100 rotations alone made tens of thousands of reads.)
const poll = 100 * time.Millisecond

func condition(ctx context.Context, c client.Client, runtimeID string) (*imv1.GardenerCluster, *metav1.Condition, error) {
	var gc imv1.GardenerCluster
	if err := c.Get(ctx, types.NamespacedName{Namespace: "kcp-system", Name: runtimeID}, &gc); err != nil {
		return nil, nil, err
	}
	return &gc, meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement), nil
}

// TestIntegrationKubeconfigForKEBCluster: a GardenerCluster as KEB creates it gets a Secret in the format consumers
// read, holding a kubeconfig issued for its shoot (on garden-in-a-box: one that authenticates at the shoot).
func TestIntegrationKubeconfigForKEBCluster(t *testing.T) {
	w := newWorld(t)
	const runtimeID, shoot = "4b7e0c52-8a43-4d0e-9d7b-2c0c3f7a1e01", "c-4b7e0c"
	w.addShoot(t, shoot, runtimeID)
	w.startOperator(t)
	ctx := t.Context()
	if err := w.kcp.Create(ctx, keb.GardenerCluster(runtimeID, shoot)); err != nil {
		t.Fatal(err)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		gc, cond, err := condition(ctx, w.kcp, runtimeID)
		require.NoError(c, err)
		require.NotNil(c, cond)
		assert.Equal(c, string(kubeconfig.ReasonSecretCreated), cond.Reason)
		assert.Equal(c, imv1.GardenerClusterStateReady, gc.Status.State)
	}, 30*time.Second, poll, "Ready with KubeconfigSecretCreated")

	var s corev1.Secret
	if err := w.kcp.Get(ctx, secretKey(runtimeID), &s); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{imv1.LabelRuntimeID: runtimeID, imv1.LabelShootName: shoot, imv1.LabelGlobalAccountID: "ga-1",
		wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: runtimeID} {
		if s.Labels[k] != v {
			t.Errorf("Secret label %s = %q, want %q", k, s.Labels[k], v)
		}
	}
	for _, a := range []string{kubeconfig.AnnotationLastSync, kubeconfig.AnnotationExpiresAt} {
		if ts, err := time.Parse(time.RFC3339, s.Annotations[a]); err != nil || ts.Location() != time.UTC {
			t.Errorf("annotation %s = %q: want RFC3339 UTC", a, s.Annotations[a])
		}
	}
	cfg, err := clientcmd.Load(s.Data["config"])
	if err != nil {
		t.Fatalf("Secret key config does not hold a kubeconfig: %v", err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext == "" || cur == nil || cfg.Clusters[cur.Cluster] == nil ||
		cfg.Clusters[cur.Cluster].Server == "" || len(cfg.Clusters[cur.Cluster].CertificateAuthorityData) == 0 {
		t.Fatalf("kubeconfig lacks current-context, server or CA data")
	}
	w.verify(t, shoot, s.Data["config"])
	gc, _, _ := condition(ctx, w.kcp, runtimeID)
	if !slices.Contains(gc.Finalizers, gardenercluster.Finalizer) {
		t.Errorf("finalizer missing: %v", gc.Finalizers)
	}
}

// TestIntegrationForcedRotation: 100 forced rotations while the Secret is watched. No version of it that the API
// server stores is missing or empty (a consumer reading at any moment reads a kubeconfig), the operator logs no
// conflict, the reason is KubeconfigSecretRotated after each rotation, and each rotation costs exactly one Gardener
// call.
func TestIntegrationForcedRotation(t *testing.T) {
	w := newWorld(t)
	const runtimeID, shoot, rotations = "9c1d7a20-3b5e-4f61-8c2a-7d4e5f6a7b02", "c-9c1d7a", 100
	w.addShoot(t, shoot, runtimeID)
	op := w.startOperator(t)
	ctx := t.Context()
	if err := w.kcp.Create(ctx, keb.GardenerCluster(runtimeID, shoot)); err != nil {
		t.Fatal(err)
	}
	var first corev1.Secret
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NoError(c, w.kcp.Get(ctx, secretKey(runtimeID), &first))
		assert.NotEmpty(c, first.Data["config"])
	}, 30*time.Second, poll, "first kubeconfig")
	conflictsBefore := w.logs.Count("the object has been modified", "Conflict")
	callsBefore := gardenerCalls()
	watched := watchSecretVersions(t, w.env.KCP, secretKey(runtimeID).Namespace, secretKey(runtimeID).Name, first.ResourceVersion)

	for i := 1; i <= rotations; i++ {
		old, err := readKubeconfig(ctx, w.kcp, runtimeID)
		if err != nil {
			t.Fatal(err)
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, imv1.AnnotationForceKubeconfigRotation)
		target := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: runtimeID}}
		if err := w.kcp.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("rotation %d: set annotation: %v", i, err)
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			gc, cond, err := condition(ctx, w.kcp, runtimeID)
			require.NoError(c, err)
			require.NotNil(c, cond)
			assert.NotContains(c, gc.Annotations, imv1.AnnotationForceKubeconfigRotation)
			assert.Equal(c, string(kubeconfig.ReasonSecretRotated), cond.Reason)
			kc, err := readKubeconfig(ctx, w.kcp, runtimeID)
			assert.NoError(c, err)
			assert.NotEqual(c, old, kc, "kubeconfig unchanged")
		}, 30*time.Second, poll, "rotation %d", i)
	}
	// Late events (the Secret and annotation updates of the last rotation) could still cause a double rotation:
	// wait until the controller has handled them and is idle.
	op.WaitIdle(t, gardenercluster.Name, 30*time.Second)
	// Every version written is judged: the watch has delivered the one stored now before it stops.
	var now corev1.Secret
	require.NoError(t, w.kcp.Get(ctx, secretKey(runtimeID), &now))
	require.Eventually(t, func() bool { return watched.seen(now.ResourceVersion) }, 30*time.Second, poll,
		"the Secret's watch delivers version %s", now.ResourceVersion)
	versions, bad, lost := watched.stop()
	if lost != nil {
		t.Errorf("the Secret's watch lost its place, so a version may not have been judged: %v", lost)
	}
	if len(bad) != 0 || versions < rotations {
		t.Errorf("%d of %d versions of the Secret were missing or empty (want 0 of at least %d): %v", len(bad), versions, rotations, bad)
	}
	if n := w.logs.Count("the object has been modified", "Conflict") - conflictsBefore; n != 0 {
		t.Errorf("%d conflict lines in the operator log, want 0", n)
	}
	if n := gardenerCalls() - callsBefore; n != rotations {
		t.Errorf("%d Gardener calls for %d forced rotations, want exactly one each", n, rotations)
	}
	_, c, err := condition(ctx, w.kcp, runtimeID)
	if err != nil || c.Reason != string(kubeconfig.ReasonSecretRotated) {
		t.Errorf("final reason %v (%v), want %s", c, err, string(kubeconfig.ReasonSecretRotated))
	}
	t.Logf("%d rotations, %d versions of the Secret judged", rotations, versions)
}

// TestIntegrationDeletionWhileOperatorDown: a GardenerCluster deleted while the operator is stopped loses its Secret
// when the operator comes back; so does a KEB-created one the operator never saw (no finalizer).
func TestIntegrationDeletionWhileOperatorDown(t *testing.T) {
	w := newWorld(t)
	const runtimeID, shoot = "1e2f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a03", "c-1e2f3a"
	const legacyID = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c04"
	w.addShoot(t, shoot, runtimeID)
	ctx := t.Context()

	op := w.startOperator(t)
	if err := w.kcp.Create(ctx, keb.GardenerCluster(runtimeID, shoot)); err != nil {
		t.Fatal(err)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		kc, err := readKubeconfig(ctx, w.kcp, runtimeID)
		assert.NoError(c, err)
		assert.NotEmpty(c, kc)
	}, 30*time.Second, poll, "Secret created")
	require.NoError(t, op.Stop())

	// A Secret an older operator wrote for a KEB GardenerCluster that never got our finalizer.
	legacy := keb.GardenerCluster(legacyID, "c-5a6b7c")
	if err := w.kcp.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if err := w.kcp.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "kubeconfig-" + legacyID,
			Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: legacyID}},
		Data: map[string][]byte{"config": []byte("old kubeconfig")},
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{runtimeID, legacyID} {
		if err := w.kcp.Delete(ctx, &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := readKubeconfig(ctx, w.kcp, runtimeID); err != nil {
		t.Fatalf("Secret gone before the operator restarted (%v): the test proves nothing", err)
	}

	w.startOperator(t)
	for _, id := range []string{runtimeID, legacyID} {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := readKubeconfig(ctx, w.kcp, id)
			assert.True(c, apierrors.IsNotFound(err), "read Secret: %v", err)
		}, 30*time.Second, poll, "Secret of %s deleted", id)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, _, err := condition(ctx, w.kcp, runtimeID)
		assert.True(c, apierrors.IsNotFound(err), "read GardenerCluster: %v", err)
	}, 30*time.Second, poll, "GardenerCluster gone")
}

// TestIntegrationRestartMakesNoGardenerCalls: after a restart, clusters whose kubeconfig is not due cost no
// Gardener call and no status write.
func TestIntegrationRestartMakesNoGardenerCalls(t *testing.T) {
	w := newWorld(t)
	const n = 20
	ctx := t.Context()
	op := w.startOperator(t)
	ids := make([]string, n)
	shoots := map[string]string{}
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		shoots[fmt.Sprintf("c-%06d", i)] = ids[i]
	}
	w.addShoots(t, shoots)
	for i, id := range ids {
		if err := w.kcp.Create(ctx, keb.GardenerCluster(id, fmt.Sprintf("c-%06d", i))); err != nil {
			t.Fatal(err)
		}
	}
	rvs := map[string]string{}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, id := range ids {
			gc, _, err := condition(ctx, w.kcp, id)
			require.NoError(c, err)
			require.Equal(c, imv1.GardenerClusterStateReady, gc.Status.State, "cluster %s", id)
			rvs[id] = gc.ResourceVersion
		}
	}, 60*time.Second, poll, "all clusters Ready")
	require.NoError(t, op.Stop())
	before := gardenerCalls()
	reconciled, err := testenv.Reconciles(gardenercluster.Name)
	require.NoError(t, err)
	op = w.startOperator(t)
	// The restarted operator reconciles every cluster at start: wait until it has reconciled all of them (and
	// whatever that caused is handled), then count.
	testenv.WaitReconciled(t, gardenercluster.Name, reconciled+n, 60*time.Second)
	op.WaitIdle(t, gardenercluster.Name, 30*time.Second)
	if calls := gardenerCalls() - before; calls != 0 {
		t.Errorf("%d Gardener calls after a restart with no kubeconfig due, want 0", calls)
	}
	for _, id := range ids {
		gc, _, err := condition(ctx, w.kcp, id)
		if err != nil {
			t.Fatal(err)
		}
		if gc.ResourceVersion != rvs[id] {
			t.Errorf("GardenerCluster %s written after the restart (resourceVersion %s -> %s)", id, rvs[id], gc.ResourceVersion)
		}
	}
}
