package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// secretCache is an informer cache of Secrets as the test sets it: the transformed copy of a version.
type secretCache struct {
	client.Reader
	secrets map[client.ObjectKey]*corev1.Secret
}

func (c *secretCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s, ok := c.secrets[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	s.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

// secretWorld is a KCP with kubeconfig Secrets, read live (counted) and through a cache that shows a version of
// each Secret as SecretCacheTransform leaves it (set by the test: it may lag behind).
type secretWorld struct {
	api   client.Client
	cache *secretCache
	live  *countingReader
	rc    *RuntimeClients
}

func newSecretWorld(t *testing.T) *secretWorld {
	t.Helper()
	w := &secretWorld{api: fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).Build(),
		cache: &secretCache{secrets: map[client.ObjectKey]*corev1.Secret{}}}
	w.live = &countingReader{Reader: w.api}
	w.rc = NewRuntimeClients(RuntimeClientsOptions{Kubeconfigs: SecretKubeconfigs{Reader: w.live, Cache: w.cache, Namespace: "kcp-system"}})
	return w
}

// write writes the runtime's kubeconfig Secret to the API server; cached makes the cache show the new version.
func (w *secretWorld) write(t *testing.T, id, server string, cached bool) {
	t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kubeconfig.SecretName(id)}}
	err := w.api.Get(t.Context(), client.ObjectKeyFromObject(sec), sec)
	sec.Data = map[string][]byte{kubeconfig.SecretKey: testKubeconfig(server)}
	if err == nil {
		err = w.api.Update(t.Context(), sec)
	} else {
		sec.UID = types.UID("uid-" + id)
		err = w.api.Create(t.Context(), sec)
	}
	if err != nil {
		t.Fatal(err)
	}
	if cached {
		w.sync(t, id)
	}
}

// sync makes the cache show the API server's version of the runtime's Secret.
func (w *secretWorld) sync(t *testing.T, id string) {
	t.Helper()
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: "kcp-system", Name: kubeconfig.SecretName(id)}
	if err := w.api.Get(t.Context(), key, sec); err != nil {
		t.Fatal(err)
	}
	w.cache.secrets[key] = cachedCopy(t, sec)
}

func (w *secretWorld) host(t *testing.T, id string) string {
	t.Helper()
	c, err := w.rc.get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c.cfg.Host
}

// TestRuntimeClientsReadTheKubeconfigOncePerVersion (issue 29): a client built from the version of the kubeconfig
// Secret the cache shows is used again without reading the Secret; a new version (rotation) is read live at once
// the cache shows it, a Secret the cache does not hold is read live every time.
func TestRuntimeClientsReadTheKubeconfigOncePerVersion(t *testing.T) {
	w := newSecretWorld(t)
	w.write(t, "rt-1", "https://one.example:443", true)
	if h := w.host(t, "rt-1"); h != "https://one.example:443" || w.live.gets != 1 {
		t.Fatalf("first client: host %s, %d live reads; want one read", h, w.live.gets)
	}
	if w.host(t, "rt-1"); w.live.gets != 1 {
		t.Errorf("the same version was read live again: %d live reads", w.live.gets)
	}

	// Rotated: while the cache lags, the client of the version it shows is used; once it shows the new
	// version, that is read live.
	w.write(t, "rt-1", "https://two.example:443", false)
	if h := w.host(t, "rt-1"); h != "https://one.example:443" || w.live.gets != 1 {
		t.Errorf("while the cache lags: host %s, %d live reads", h, w.live.gets)
	}
	w.sync(t, "rt-1")
	if h := w.host(t, "rt-1"); h != "https://two.example:443" || w.live.gets != 2 {
		t.Errorf("after the cache saw the rotation: host %s, %d live reads; want the new kubeconfig, read once", h, w.live.gets)
	}

	// Not in the cache (a Secret without the operator's label): read live at every call.
	w.write(t, "rt-2", "https://legacy.example:443", false)
	w.host(t, "rt-2")
	w.host(t, "rt-2")
	if w.live.gets != 4 {
		t.Errorf("a Secret the cache does not hold: %d live reads in total, want 4", w.live.gets)
	}
}
