package integration_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// managerLikeClient reads through a cache restricted as the operator's manager restricts it (Secrets and ConfigMaps
// with the managed-by label only) and writes to the API server.
func managerLikeClient(t *testing.T, k *testenv.KCP) client.Client {
	t.Helper()
	managed := labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})
	c, err := cache.New(k.Config, cache.Options{Scheme: k.Client.Scheme(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: managed}, &corev1.ConfigMap{}: {Label: managed}}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	for _, o := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}, &imv1.GardenerCluster{}, &imv1.DeletionRecord{}} {
		_, err := c.GetInformer(ctx, o)
		require.NoError(t, err)
	}
	require.True(t, c.WaitForCacheSync(ctx))
	cached, err := client.New(k.Config, client.Options{Scheme: k.Client.Scheme(), Cache: &client.CacheOptions{Reader: c}})
	require.NoError(t, err)
	return cached
}

// TestIntegrationPortContracts runs the contracts of the KCP-side ports on a real kube-apiserver with the operator's
// CRDs, through caches restricted as the manager restricts them.
func TestIntegrationPortContracts(t *testing.T) {
	k := testenv.StartKCP(t)
	cached := managerLikeClient(t, k)
	c := k.Client

	t.Run("AccessObjects", func(t *testing.T) {
		contract.RunAccessObjectsContract(t, func(t *testing.T) contract.AccessFixture {
			return contract.AccessFixture{Access: &kube.AccessObjects{Client: cached}, Namespace: testenv.Namespace(t, c, "access"),
				OwnerUID: "8d2c7f0e-0000-4000-8000-000000000001",
				SetKubeconfig: func(t *testing.T, namespace, runtimeID string, expires time.Time) {
					if expires.IsZero() { // as the previous infrastructure manager wrote it: its last-sync, no expiry
						writeSecret(t, c, namespace, kubeconfig.SecretName(runtimeID), map[string]string{"operator.kyma-project.io/managed-by": "infrastructure-manager"},
							map[string]string{"operator.kyma-project.io/last-sync": kubeconfig.FormatTime(time.Now())})
						return
					}
					writeSecret(t, c, namespace, kubeconfig.SecretName(runtimeID), map[string]string{wire.LabelManagedBy: wire.ManagedByValue},
						map[string]string{kubeconfig.AnnotationExpiresAt: kubeconfig.FormatTime(expires)})
				},
				AddLabel: func(t *testing.T, namespace, runtimeID, key, value string) {
					patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, key, value)
					gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: runtimeID}}
					require.NoError(t, c.Patch(t.Context(), gc, client.RawPatch(types.MergePatchType, patch)))
				},
				Labels: func(t *testing.T, namespace, runtimeID string) map[string]string {
					gc := &imv1.GardenerCluster{}
					require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: runtimeID}, gc))
					return gc.Labels
				}}
		})
	})

	t.Run("DeletionGuard", func(t *testing.T) {
		contract.RunDeletionGuardContract(t, func(t *testing.T) contract.GuardFixture {
			ns := testenv.Namespace(t, c, "guard")
			return contract.GuardFixture{Guard: &kube.DeletionGuard{Cached: cached, Live: c, Writer: c, Namespace: ns},
				SetFrozen: func(t *testing.T, frozen bool) {
					// As a person does it: `kubectl patch`, or `kubectl create configmap` (without the label) first.
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kube.GuardConfigMapName}}
					patch := fmt.Appendf(nil, `{"data":{"frozen":"%t"}}`, frozen)
					err := c.Patch(t.Context(), cm, client.RawPatch(types.MergePatchType, patch))
					if apierrors.IsNotFound(err) {
						cm.Data = map[string]string{"frozen": fmt.Sprint(frozen)}
						err = c.Create(t.Context(), cm)
					}
					require.NoError(t, err)
				}}
		})
	})

	t.Run("DeletionRecords", func(t *testing.T) {
		contract.RunDeletionRecordsContract(t, func(t *testing.T) contract.RecordsFixture {
			ns := testenv.Namespace(t, c, "records")
			unwatched := testenv.Namespace(t, c, "unwatched")
			return contract.RecordsFixture{Records: &kube.DeletionRecords{Cached: cached, Live: c, Writer: c, Namespaces: []string{ns},
				Namespace: ns}, Namespace: ns, Unwatched: unwatched}
		})
	})

	t.Run("RuntimeRegistry", func(t *testing.T) {
		trial := keb.LoadRuntime(t, filepath.Join(testenv.RepoRoot(), "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"))
		runtimeOf := func(id, namespace, shoot string) *imv1.Runtime {
			rt := keb.WithIdentity(trial, id, shoot)
			rt.Namespace = namespace
			return rt
		}
		contract.RunRuntimeRegistryContract(t, func(t *testing.T) contract.RegistryFixture {
			ns := testenv.Namespace(t, c, "registry")
			return contract.RegistryFixture{Registry: &kube.RuntimeRegistry{Live: c, Writer: c, Namespaces: []string{ns}}, Namespace: ns,
				Put: func(t *testing.T, id, shoot string) {
					require.NoError(t, c.Create(t.Context(), runtimeOf(id, ns, shoot)))
				},
				Exists: func(t *testing.T, id string) (bool, bool) {
					var rt imv1.Runtime
					err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: id}, &rt)
					if apierrors.IsNotFound(err) {
						return false, false
					}
					require.NoError(t, err)
					return true, rt.Annotations[wire.AnnotationRestore] == "true"
				},
				Document: func(id, namespace, shoot string) []byte {
					doc, err := mapping.RestoreDocument(runtimeOf(id, namespace, shoot))
					require.NoError(t, err)
					return doc
				}}
		})
	})

	t.Run("ServerClock", func(t *testing.T) {
		contract.RunServerClockContract(t, func(t *testing.T) contract.ServerClockFixture {
			clock, err := kube.NewServerClock(k.Config)
			require.NoError(t, err)
			unreachable, err := kube.NewServerClock(&rest.Config{Host: "https://127.0.0.1:1"})
			require.NoError(t, err)
			// envtest's API server runs on this machine: its clock is ours (the Date header has seconds).
			return contract.ServerClockFixture{Clock: clock, Now: time.Now, Tolerance: 2 * time.Second, Unreachable: unreachable}
		})
	})

	t.Run("BootstrapSource", func(t *testing.T) {
		contract.RunBootstrapSourceContract(t, func(t *testing.T, o contract.BootstrapSourceOptions) contract.BootstrapSourceFixture {
			// Read as the operator reads: through the cache made for exactly these two objects.
			return bootstrapSourceFixture(t, c, testenv.Namespace(t, c, "bootstrap"), o, func(cm client.ObjectKey, pull *client.ObjectKey) client.Reader {
				bc, err := kube.NewBootstrapCache(k.Config, c.Scheme(), cm, pull)
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				go func() { _ = bc.Start(ctx) }()
				require.True(t, bc.WaitForCacheSync(ctx))
				return bc
			})
		})
	})

	// The RuntimeConfigurator contract runs on real runtime API servers (TestIntegrationRuntimeConfigurator); here
	// its source of kubeconfigs, the Secrets in KCP, read through the manager-like cache.
	t.Run("SecretKubeconfigs", func(t *testing.T) {
		ns := testenv.Namespace(t, c, "kubeconfigs")
		src := kube.SecretKubeconfigs{Reader: cached, Namespace: ns}
		writeSecret(t, c, ns, kubeconfig.SecretName("rt-1"), map[string]string{wire.LabelManagedBy: wire.ManagedByValue}, nil)
		testenv.Eventually(t, 10*time.Second, "the kubeconfig of rt-1 is read from its Secret", func() (bool, string) {
			kc, err := src.Kubeconfig(t.Context(), "rt-1")
			return err == nil && string(kc) == "kubeconfig", fmt.Sprintf("%q, %v", kc, err)
		})
		_, err := src.Kubeconfig(t.Context(), "rt-without-secret")
		require.ErrorIs(t, err, ports.ErrRuntimeUnreachable)
	})
}

// writeSecret creates or replaces a kubeconfig Secret as the GardenerCluster controller writes it.
func writeSecret(t *testing.T, c client.Client, namespace, name string, labels, annotations map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	err := c.Get(t.Context(), client.ObjectKeyFromObject(s), s)
	s.Labels, s.Annotations = labels, annotations
	s.Data = map[string][]byte{kubeconfig.SecretKey: []byte("kubeconfig")}
	if apierrors.IsNotFound(err) {
		require.NoError(t, c.Create(t.Context(), s))
		return
	}
	require.NoError(t, err)
	require.NoError(t, c.Update(t.Context(), s))
}
