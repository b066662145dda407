package selfservice

import (
	"context"
	"encoding/json"
	"fmt"
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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/testenv"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// secretPassword is the upstream credential of the test; it must appear in the garden copy and nowhere else.
const secretPassword = "e2e-UNIQUE-registry-password-5c2f"

// TestRegistryCacheIntegration: a customer creates a RegistryCacheConfig with credentials in a runtime; within
// seconds of a trigger the cache is in the shoot's registry-cache extension and the credentials are copied to the
// garden; a bad object gets a condition and changes nothing; removing the config removes both.
func TestRegistryCacheIntegration(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	const id, shootName = "5a1b2c3d-0000-4000-8000-00000000rc01", "c-rc0001"
	if err := putKyma(ctx, w.kcp, id); err != nil {
		t.Fatal(err)
	}
	if err := w.kcp.Create(ctx, kebRuntime(t, id, shootName)); err != nil {
		t.Fatal(err)
	}
	w.waitReady(t, id)
	rtc := w.runtimeAdmin(t, shootName)
	installRegistryCacheCRD(t, rtc)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "rc-secret"}, Immutable: ptrTo(true),
			StringData: map[string]string{"username": "robot", "password": secretPassword}},
	} {
		if err := rtc.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	putCacheConfig(t, rtc, "docker", map[string]any{"upstream": "docker.io", "secretReferenceName": "rc-secret", "volume": map[string]any{"size": "20Gi"}})
	putCacheConfig(t, rtc, "too-big", map[string]any{"upstream": "quay.io", "volume": map[string]any{"size": "a lot"}})

	triggered := w.trigger(t, id)
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
	t.Logf("trigger -> cache in the shoot: %s", time.Since(triggered).Round(time.Millisecond))
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
	triggered = w.trigger(t, id)
	testenv.Eventually(t, time.Minute, "the cache gone from the shoot", func() (bool, string) {
		caches := w.shootCaches(t, shootName)
		return len(caches) == 0, fmt.Sprintf("caches %+v", caches)
	})
	t.Logf("trigger -> cache removed from the shoot: %s", time.Since(triggered).Round(time.Millisecond))
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

// putKyma writes the runtime's Kyma resource with the registry-cache module enabled, as lifecycle-manager would.
func putKyma(ctx context.Context, c client.Client, name string) error {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.KymaGVK.GroupVersion().String(), "kind": "Kyma",
		"metadata": map[string]any{"name": name, "namespace": kcpNamespace},
		"spec":     map[string]any{"channel": "regular", "modules": []any{map[string]any{"name": kube.RegistryCacheModule}}}}}
	return c.Create(ctx, u)
}

// installRegistryCacheCRD installs the RegistryCacheConfig CRD into the runtime, as the module would.
func installRegistryCacheCRD(t *testing.T, c client.Client) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testCRDs, "runtime", "core.kyma-project.io_registrycacheconfigs.yaml"))
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
	testenv.Eventually(t, 30*time.Second, "RegistryCacheConfig CRD established", func() (bool, string) {
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
	testenv.Eventually(t, 30*time.Second, "RegistryCacheConfig served", func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kube.RegistryCacheConfigGVK.GroupVersion().WithKind("RegistryCacheConfigList"))
		err := c.List(context.Background(), list)
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

// trigger asks for an immediate sync the way an SRE or the Runtime Watcher can without the metrics endpoint: a
// new value of the sync annotation.
func (w *world) trigger(t *testing.T, id string) time.Time {
	t.Helper()
	at := time.Now()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, imv1.AnnotationSyncRegistryCache, at.Format(time.RFC3339Nano))
	rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: id}}
	if err := w.kcp.Patch(context.Background(), rt, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	return at
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
