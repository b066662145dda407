package gardenercluster_test

import (
	"context"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

// One garden-in-a-box per test binary (the in-process gardener-apiserver cannot be started twice): KCP with the
// CRDs, the real gardener-apiserver, the simulated gardenlet and one runtime API server shared by all shoots, so
// issued kubeconfigs can be tried. The tests use distinct runtime IDs and shoots.
func TestMain(m *testing.M) { testenv.Main(m) }

type world struct {
	env  *gardenbox.Env
	kcp  client.Client // uncached: assertions see the API server, not a cache
	logs *testenv.Logs
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.Garden(t, testenv.GardenOptions{RuntimeAPIServers: runtimeapi.ModeShared})
	return &world{env: env, kcp: env.KCPClient, logs: testenv.CaptureLogs()}
}

// startOperator runs the manager with only the kubeconfig controller until the test ends.
func (w *world) startOperator(t *testing.T) *testenv.Operator {
	t.Helper()
	opts := testenv.Options(w.env.Catalogue.Project)
	opts.GardenerClusterWorkers = 10
	opts.Controllers = []string{gardenercluster.Name}
	return testenv.RunOperator(t, w.env.KCP, w.env.Garden, opts)
}

// addShoot makes a shoot of runtimeID exist (its runtime-id annotation, as the operator and its predecessors
// write it) and be ready for kubeconfigs.
func (w *world) addShoot(t *testing.T, name, runtimeID string) {
	t.Helper()
	w.addShoots(t, map[string]string{name: runtimeID})
}

// addShoots creates the shoots (name to runtime ID) at once and waits until all are ready for kubeconfigs: the
// simulated gardenlet creates them side by side, so the test waits for one creation, not for each in turn.
func (w *world) addShoots(t *testing.T, shoots map[string]string) {
	t.Helper()
	created := make([]client.ObjectKey, 0, len(shoots))
	for name, runtimeID := range shoots {
		s, err := w.env.NewShoot(name, "aws")
		require.NoError(t, err)
		s.Annotations = map[string]string{shoot.AnnotationRuntimeID: runtimeID}
		require.NoError(t, w.env.GardenClient.Create(t.Context(), s), "create shoot %s", name)
		created = append(created, client.ObjectKeyFromObject(s))
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, key := range created {
			var cur gardencorev1beta1.Shoot
			require.NoError(c, w.env.GardenClient.Get(t.Context(), key, &cur))
			op := cur.Status.LastOperation
			require.True(c, op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded, "shoot %s: last operation %+v", key.Name, op)
			require.NotEmpty(c, cur.Status.AdvertisedAddresses, "shoot %s", key.Name)
		}
	}, 2*time.Minute, 50*time.Millisecond, "shoots reconciled")
}

// verify proves that a kubeconfig issued for the shoot works: SelfSubjectReview asks the runtime API server who we
// are, which succeeds only when the client certificate Gardener signed is trusted there.
func (w *world) verify(t *testing.T, shoot string, kubeconfig []byte) {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	require.NoError(t, err, "kubeconfig of %s", shoot)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err, "kubeconfig issued for %s does not authenticate at the runtime API server", shoot)
	t.Logf("kubeconfig of %s authenticates as %q", shoot, review.Status.UserInfo.Username)
}

// gardenerCalls is the number of admin kubeconfig requests the operator made so far (all outcomes).
func gardenerCalls() int {
	n := 0.0
	m := gardenercluster.NewMetrics(nil) // the operator's collectors, registered by its first start
	for _, o := range gardenercluster.Outcomes() {
		n += testutil.ToFloat64(m.GardenerRequests.WithLabelValues(o))
	}
	return int(n)
}
