package selfservice

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/test/testenv"
)

// secretPassword is the upstream credential of the test; it must appear in the garden copy and nowhere else.
const secretPassword = "e2e-UNIQUE-registry-password-5c2f"

// TestRegistryCacheIntegration: a customer enables the registry-cache module in the runtime's own Kyma resource
// and creates a RegistryCacheConfig with credentials; within seconds of the Runtime Watcher's event (a POST to the
// operator's listener, the periodic sync being an hour away) the cache is in the shoot's registry-cache extension and
// the credentials are copied to the garden; a bad object gets a condition and changes nothing; removing the config
// removes both.
func TestRegistryCacheIntegration(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	const id, shootName = "5a1b2c3d-0000-4000-8000-00000000rc01", "c-rc0001"
	if err := w.kcp.Create(ctx, kebRuntime(t, id, shootName)); err != nil {
		t.Fatal(err)
	}
	w.waitReady(t, id)
	rtc := w.runtimeAdmin(t, shootName)
	// The module choice is the runtime's: lifecycle-manager's CRD and kyma-system/default with the module.
	installRuntimeCRD(t, rtc, "operator.kyma-project.io_kymas.yaml", kube.KymaGVK.GroupVersion().WithKind("KymaList"))
	installRuntimeCRD(t, rtc, "core.kyma-project.io_registrycacheconfigs.yaml", kube.RegistryCacheConfigGVK.GroupVersion().WithKind("RegistryCacheConfigList"))
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "rc-secret"}, Immutable: ptrTo(true),
			StringData: map[string]string{"username": "robot", "password": secretPassword}},
	} {
		if err := rtc.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// kyma-system is the operator's (KymaSystemNSCreated).
	if err := putRuntimeKyma(ctx, rtc, "istio", kube.RegistryCacheModule); err != nil {
		t.Fatal(err)
	}
	putCacheConfig(t, rtc, "docker", map[string]any{"upstream": "docker.io", "secretReferenceName": "rc-secret", "volume": map[string]any{"size": "20Gi"}})
	putCacheConfig(t, rtc, "too-big", map[string]any{"upstream": "quay.io", "volume": map[string]any{"size": "a lot"}})

	triggered := w.watcherEvent(t, id)
	var copyName string
	testenv.Eventually(t, time.Minute, "the cache in the shoot's registry-cache extension", func() (bool, string) {
		caches := w.shootCaches(t, shootName)
		for _, c := range caches {
			if c.Upstream == "docker.io" && strings.HasPrefix(c.CredentialsSecret, registrycache.SecretPrefix) {
				copyName = c.CredentialsSecret
				return true, ""
			}
		}
		return false, fmt.Sprintf("caches %+v", caches)
	})
	t.Logf("watcher event -> cache in the shoot: %s", time.Since(triggered).Round(time.Millisecond))
	if caches := w.shootCaches(t, shootName); len(caches) != 1 {
		t.Errorf("shoot caches %+v, want only docker.io (quay.io's object is invalid)", caches)
	}
	copySecret := &corev1.Secret{}
	if err := w.garden.Get(ctx, client.ObjectKey{Namespace: "garden-" + w.project, Name: copyName}, copySecret); err != nil {
		t.Fatalf("garden copy %s: %v", copyName, err)
	}
	if string(copySecret.Data["password"]) != secretPassword || copySecret.Immutable == nil || !*copySecret.Immutable ||
		copySecret.Labels[gardener.LabelRuntimeID] != id || copySecret.Labels[gardener.LabelCacheID] == "" {
		t.Errorf("garden copy: labels %v, immutable %v, password copied %v", copySecret.Labels, copySecret.Immutable,
			string(copySecret.Data["password"]) == secretPassword)
	}
	// The copy's name is recorded in the KCP: the operator finds its copies there, it never lists the garden.
	ledger := &corev1.ConfigMap{}
	if err := w.kcp.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: kube.RegistryCacheLedgerName(id)}, ledger); err != nil {
		t.Fatalf("KCP record of the copies: %v", err)
	}
	if _, ok := ledger.Data[copyName]; !ok || ledger.Labels[imv1.LabelRuntimeID] != id {
		t.Errorf("KCP record of the copies: labels %v, data %v; want %s recorded", ledger.Labels, ledger.Data, copyName)
	}
	testenv.Eventually(t, time.Minute, "RegistryCacheConfig docker Applied", func() (bool, string) {
		c := cacheCondition(t, rtc, "docker")
		return c != nil && c.Reason == string(registrycache.ReasonApplied) && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", c)
	})
	if c := cacheCondition(t, rtc, "too-big"); c == nil || c.Reason != string(registrycache.ReasonInvalidVolumeSize) || c.Status != metav1.ConditionFalse {
		t.Errorf("condition of the invalid object: %+v, want %s", c, registrycache.ReasonInvalidVolumeSize)
	}
	rt := w.waitReady(t, id)
	if !managedByRegistryCache(rt) {
		t.Errorf("spec.imageRegistryCache is not owned by field manager %s: %+v", imv1.FieldManagerRegistryCache, rt.ManagedFields)
	}

	// Removing the object removes the cache from the shoot and, once the shoot no longer references it, the copy.
	if err := rtc.Delete(ctx, cacheObject("docker")); err != nil {
		t.Fatal(err)
	}
	triggered = w.watcherEvent(t, id)
	testenv.Eventually(t, time.Minute, "the cache gone from the shoot", func() (bool, string) {
		caches := w.shootCaches(t, shootName)
		return len(caches) == 0, fmt.Sprintf("caches %+v", caches)
	})
	t.Logf("watcher event -> cache removed from the shoot: %s", time.Since(triggered).Round(time.Millisecond))
	testenv.Eventually(t, 2*time.Minute, "the garden copy deleted", func() (bool, string) {
		err := w.garden.Get(ctx, client.ObjectKey{Namespace: "garden-" + w.project, Name: copyName}, &corev1.Secret{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
	})
	testenv.Eventually(t, time.Minute, "the empty KCP record of the copies removed", func() (bool, string) {
		err := w.kcp.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: kube.RegistryCacheLedgerName(id)}, &corev1.ConfigMap{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
	})
	w.checkNoCredentialsLeaked(t, id, secretPassword)
}

func ptrTo[T any](v T) *T { return &v }

// putRuntimeKyma writes the runtime's Kyma resource kyma-system/default with modules, as the customer does.
func putRuntimeKyma(ctx context.Context, c client.Client, modules ...string) error {
	list := make([]any, 0, len(modules))
	for _, m := range modules {
		list = append(list, map[string]any{"name": m, "managed": true})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.KymaGVK.GroupVersion().String(), "kind": kube.KymaGVK.Kind,
		"metadata": map[string]any{"name": registrycache.KymaName, "namespace": registrycache.KymaNamespace},
		"spec":     map[string]any{"channel": "regular", "modules": list}}}
	return c.Create(ctx, u)
}

// installRuntimeCRD installs a test CRD of adapters/kube/testdata/crds/runtime into the runtime, as its owner would.
func installRuntimeCRD(t *testing.T, c client.Client, file string, list schema.GroupVersionKind) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testCRDs, "runtime", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, crd.Name+" established", func() (bool, string) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(crd), got); err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "not established"
	})
	// The client's REST mapper learned the API before the CRD existed; a new client discovers it.
	testenv.Eventually(t, 30*time.Second, crd.Name+" served", func() (bool, string) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(list)
		err := c.List(context.Background(), l)
		return err == nil, fmt.Sprint(err)
	})
}

func cacheObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kube.RegistryCacheConfigGVK)
	u.SetNamespace("team")
	u.SetName(name)
	return u
}

func putCacheConfig(t *testing.T, c client.Client, name string, spec map[string]any) {
	t.Helper()
	u := cacheObject(name)
	u.Object["spec"] = spec
	if err := c.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

func cacheCondition(t *testing.T, c client.Client, name string) *metav1.Condition {
	t.Helper()
	u := cacheObject(name)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var conds []metav1.Condition
	data, _ := json.Marshal(raw)
	_ = json.Unmarshal(data, &conds)
	return meta.FindStatusCondition(conds, registrycache.ConditionType)
}

// watcherEvent posts the Runtime Watcher's event about a RegistryCacheConfig to the operator's listener, with the
// runtime's client certificate in X-Forwarded-Client-Cert as the ingress in front of the listener sets it.
func (w *world) watcherEvent(t *testing.T, id string) time.Time {
	t.Helper()
	at := time.Now()
	body := `{"watched":{"Namespace":"team","Name":"docker"},"watchedGvk":{"group":"core.kyma-project.io","version":"v1beta1","kind":"RegistryCacheConfig"}}`
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", w.listenerPort, registrycachesync.WatcherPath), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(registrycachesync.XFCCHeader, clientCertXFCC(t, id))
	var resp *http.Response
	// The listener starts with the operator: wait for its port.
	testenv.Eventually(t, 30*time.Second, "the watcher listener answers", func() (bool, string) {
		resp, err = http.DefaultClient.Do(req.Clone(context.Background()))
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		req.Body = io.NopCloser(strings.NewReader(body))
		return true, ""
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watcher event: %s, want 200", resp.Status)
	}
	return at
}

// clientCertXFCC is an X-Forwarded-Client-Cert value with a certificate whose common name is the runtime ID.
func clientCertXFCC(t *testing.T, runtimeID string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: runtimeID},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return `Hash=e2e;Cert="` + url.QueryEscape(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))) + `"`
}

// shootCaches reads the caches of the shoot's registry-cache extension from the garden.
func (w *world) shootCaches(t *testing.T, shootName string) []shoot.RegistryCache {
	t.Helper()
	s := &gardencorev1beta1.Shoot{}
	if err := w.garden.Get(context.Background(), client.ObjectKey{Namespace: "garden-" + w.project, Name: shootName}, s); err != nil {
		t.Fatal(err)
	}
	return gardener.RegistryCacheView(s).Caches
}

func managedByRegistryCache(rt *imv1.Runtime) bool {
	for _, m := range rt.ManagedFields {
		if m.Manager == imv1.FieldManagerRegistryCache && m.FieldsV1 != nil && strings.Contains(m.FieldsV1.GetRawString(), "f:imageRegistryCache") {
			return true
		}
	}
	return false
}

// checkNoCredentialsLeaked: the credential is in no log line, no event, no Runtime and no condition.
func (w *world) checkNoCredentialsLeaked(t *testing.T, id, credential string) {
	t.Helper()
	if w.logs.Count(credential) > 0 {
		t.Error("the operator logged the registry credentials")
	}
	var events corev1.EventList
	if err := w.kcp.List(context.Background(), &events, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(events)
	rtRaw, _ := json.Marshal(w.runtime(t, id))
	if strings.Contains(string(raw), credential) || strings.Contains(string(rtRaw), credential) {
		t.Error("the registry credentials are in an event or in the Runtime")
	}
}
