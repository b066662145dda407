package gardenercluster_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/operator/controllers/setup"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

// One garden-in-a-box per test binary (the in-process gardener-apiserver cannot be started twice); the tests use
// distinct runtime IDs and shoots.
var (
	sharedEnv     *gardenbox.Env
	sharedEnvErr  error
	sharedEnvOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEnv != nil {
		_ = sharedEnv.Stop()
	}
	os.Exit(code)
}

func startGardenbox() (*gardenbox.Env, error) {
	captureLogs()
	scheme, err := setup.NewScheme()
	if err != nil {
		return nil, err
	}
	env, err := gardenbox.Start(context.Background(), gardenbox.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		KCPScheme:         scheme,
		RuntimeAPIServers: runtimeapi.ModeShared,
	})
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kcp-system"}}
	if err := env.KCPClient.Create(context.Background(), ns); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return env, nil
}

// newWorld returns the shared garden-in-a-box: KCP with our CRDs, a garden with the real gardener-apiserver, the
// simulated gardenlet and one runtime API server shared by all shoots, so issued kubeconfigs can be tried.
func newWorld(t *testing.T) (*kcp, *garden) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (KUBEBUILDER_ASSETS)")
	}
	sharedEnvOnce.Do(func() { sharedEnv, sharedEnvErr = startGardenbox() })
	if sharedEnvErr != nil {
		t.Fatalf("start garden-in-a-box: %v", sharedEnvErr)
	}
	env := sharedEnv
	k := &kcp{cfg: env.KCP, client: env.KCPClient}
	g := &garden{
		cfg:     env.Garden,
		project: env.Catalogue.Project,
		addShoot: func(t *testing.T, name string) {
			t.Helper()
			s, err := env.NewShoot(name, "aws")
			if err != nil {
				t.Fatal(err)
			}
			if err := env.GardenClient.Create(context.Background(), s); err != nil {
				t.Fatalf("create shoot %s: %v", name, err)
			}
			waitFor(t, 2*time.Minute, "shoot "+name+" reconciled", func() (bool, error) {
				var cur gardencorev1beta1.Shoot
				err := env.GardenClient.Get(context.Background(), types.NamespacedName{Namespace: s.Namespace, Name: name}, &cur)
				op := cur.Status.LastOperation
				return err == nil && op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded &&
					len(cur.Status.AdvertisedAddresses) > 0, client.IgnoreNotFound(err)
			})
		},
		verify: func(t *testing.T, shoot string, kubeconfig []byte) {
			t.Helper()
			cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
			if err != nil {
				t.Fatalf("kubeconfig of %s: %v", shoot, err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// SelfSubjectReview asks the runtime API server who we are: it succeeds only when the client certificate
			// Gardener signed is trusted there.
			review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("kubeconfig issued for %s does not authenticate at the runtime API server: %v", shoot, err)
			}
			t.Logf("kubeconfig of %s authenticates as %q", shoot, review.Status.UserInfo.Username)
		},
	}
	return k, g
}
