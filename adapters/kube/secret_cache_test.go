package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

func kubeconfigSecret(config []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kubeconfig.SecretName("rt-1"), Namespace: "kcp-system", ResourceVersion: "7",
			Annotations:   map[string]string{kubeconfig.AnnotationExpiresAt: "2026-06-02T12:00:00Z", annotationCachedKeys: "7:config"}, // planted, naming this very version (impossible on a server)
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"}}},
		Data: map[string][]byte{kubeconfig.SecretKey: config, "empty": {}},
	}
}

// cachedCopy is what the manager's cache holds of sec.
func cachedCopy(t *testing.T, sec *corev1.Secret) *corev1.Secret {
	t.Helper()
	out, err := SecretCacheTransform(sec.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Secret)
}

// TestSecretCacheTransform: the cached copy keeps the metadata, loses data and managedFields, and tells which keys
// held data; a record planted on the server is overwritten, not believed.
func TestSecretCacheTransform(t *testing.T) {
	c := cachedCopy(t, kubeconfigSecret([]byte("apiVersion: v1\nkind: Config\n")))
	if c.Data != nil || c.ManagedFields != nil || c.ResourceVersion != "7" || c.Annotations[kubeconfig.AnnotationExpiresAt] == "" {
		t.Fatalf("cached copy %+v", c)
	}
	if !hasData(c, kubeconfig.SecretKey, true) || hasData(c, "empty", true) || hasData(c, "missing", true) {
		t.Errorf("record %q: want only %q to hold data", c.Annotations[annotationCachedKeys], kubeconfig.SecretKey)
	}
	again, err := SecretCacheTransform(c.DeepCopy()) // client-go passes cached objects through the transform again
	if err != nil || !hasData(again.(*corev1.Secret), kubeconfig.SecretKey, true) {
		t.Errorf("transformed twice: %v, record %q; want the kubeconfig still recorded", err, again.(*corev1.Secret).Annotations[annotationCachedKeys])
	}
	emptied := kubeconfigSecret(nil) // someone emptied the kubeconfig and planted a record naming a version
	emptied.Annotations[annotationCachedKeys] = "6:config"
	if hasData(cachedCopy(t, emptied), kubeconfig.SecretKey, true) {
		t.Error("an emptied kubeconfig counts as present in the cache")
	}
	noData := kubeconfigSecret(nil)
	noData.Data = nil
	noData.Annotations[annotationCachedKeys] = "6:config"
	if hasData(cachedCopy(t, noData), kubeconfig.SecretKey, true) {
		t.Error("a Secret without data whose planted record names another version counts as holding a kubeconfig")
	}
	planted := kubeconfigSecret(nil)
	planted.Data = nil
	if hasData(planted, kubeconfig.SecretKey, false) {
		t.Error("a record on a Secret read live is believed")
	}
	if got := withoutCacheRecord(c.Annotations); len(got) != 1 || got[kubeconfig.AnnotationExpiresAt] == "" {
		t.Errorf("annotations handed out %v; want the server's, without the cache's record", got)
	}
}

// TestStoreAndAccessOnTheTrimmedCache: the kubeconfig store and KubeconfigReady decide on a cache of trimmed
// Secrets as on the full ones, and an emptied kubeconfig is seen as missing.
func TestStoreAndAccessOnTheTrimmedCache(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ref := ports.SecretRef{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-1"), Key: kubeconfig.SecretKey}
	for _, tc := range []struct {
		name   string
		config []byte
	}{{"filled", []byte("apiVersion: v1\nkind: Config\n")}, {"emptied", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			full := kubeconfigSecret(tc.config)
			cache := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cachedCopy(t, full)).Build()
			onServer := full.DeepCopy()
			onServer.ManagedFields = nil // the fake client does not take them
			live := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(onServer).Build()
			want := len(tc.config) > 0
			md, err := NewKubeconfigSecretStore(cache, live, live).ReadMetadata(t.Context(), ref, ports.ReadCached)
			if err != nil || md.HasKubeconfig != want {
				t.Errorf("ReadMetadata(cached): HasKubeconfig %v, %v; want %v", md.HasKubeconfig, err, want)
			}
			if _, ok := md.Annotations[annotationCachedKeys]; ok {
				t.Error("ReadMetadata hands out the cache's record as an annotation")
			}
			ready, err := (&AccessObjects{Client: cache}).KubeconfigReady(t.Context(), "kcp-system", "rt-1", now)
			if err != nil || (ready == ports.KubeconfigValid) != want {
				t.Errorf("KubeconfigReady: %v, %v; want %v", ready, err, want)
			}
		})
	}
}

// countingReader counts the reads that reach it (the API server in the store's tests).
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestCachedMetadataNeverReadsLive: CachedMetadata answers from the cache alone (a miss is found=false, not
// confirmed), while ReadMetadata with ReadCached confirms a miss live; both read a cached Secret's record of its data.
func TestCachedMetadataNeverReadsLive(t *testing.T) {
	sec := kubeconfigSecret([]byte("apiVersion: v1\nkind: Config\n"))
	sec.ManagedFields = nil
	cache := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cachedCopy(t, sec)).Build()
	live := &countingReader{Reader: fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(sec.DeepCopy()).Build()}
	store := NewKubeconfigSecretStore(cache, live, nil)
	missing := ports.SecretRef{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-2"), Key: kubeconfig.SecretKey}
	if _, found, err := store.CachedMetadata(t.Context(), missing); err != nil || found || live.gets != 0 {
		t.Fatalf("CachedMetadata of a Secret the cache does not hold: found %v, err %v, live reads %d; want not found, no live read", found, err, live.gets)
	}
	if _, err := store.ReadMetadata(t.Context(), missing, ports.ReadCached); !errors.Is(err, ports.ErrSecretNotFound) || live.gets != 1 {
		t.Fatalf("ReadMetadata(ReadCached) of a cache miss: err %v, live reads %d; want ErrSecretNotFound after one live read", err, live.gets)
	}
	ref := ports.SecretRef{Namespace: "kcp-system", Name: kubeconfig.SecretName("rt-1"), Key: kubeconfig.SecretKey}
	md, found, err := store.CachedMetadata(t.Context(), ref)
	if err != nil || !found || !md.HasKubeconfig || md.ResourceVersion != "7" || live.gets != 1 {
		t.Fatalf("CachedMetadata of a cached Secret: %+v found %v err %v, live reads %d", md, found, err, live.gets)
	}
	if _, ok := md.Annotations[annotationCachedKeys]; ok {
		t.Error("the cache's record of the data keys is revealed as an annotation")
	}
}
