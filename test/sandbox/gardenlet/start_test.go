package gardenlet

import (
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// TestAFailedServerStartIsSaidInTheOperation: a shoot whose runtime API server does not start stays Processing, and
// its operation says why, so a test waiting for the shoot names the cause instead of an old "waiting for its start".
func TestAFailedServerStartIsSaidInTheOperation(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "c-1", UID: "u-1", Generation: 1}}
	c := fakeclient.NewClientBuilder().WithScheme(Scheme()).WithObjects(shoot).WithStatusSubresource(shoot).Build()
	pool := runtimeapi.NewPool(runtimeapi.PoolOptions{Mode: runtimeapi.ModePerShoot, BinaryAssetsDirectory: t.TempDir()})
	t.Cleanup(func() { _ = pool.Stop() })
	g := &Gardenlet{client: c, runtime: pool, opts: Defaults(), log: logr.Discard(), ops: map[types.UID]operation{}}
	read := &gardencorev1beta1.Shoot{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), read); err != nil {
		t.Fatal(err)
	}
	if _, err := g.step(t.Context(), logr.Discard(), read, gardencorev1beta1.LastOperationTypeCreate); err == nil {
		t.Fatal("a server that cannot start (no binaries): want the step's error, so that it is retried")
	}
	got := &gardencorev1beta1.Shoot{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
		t.Fatal(err)
	}
	op := got.Status.LastOperation
	if op == nil || op.State != gardencorev1beta1.LastOperationStateProcessing || !strings.Contains(op.Description, "did not start") ||
		!strings.Contains(op.Description, "etcd") {
		t.Errorf("last operation %+v: want Processing, saying that the server did not start and why", op)
	}
}
