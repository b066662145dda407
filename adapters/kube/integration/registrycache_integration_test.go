package integration_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// writeKubeconfigSecret stores a kubeconfig of the test API server as the kubeconfig Secret of runtimeID, so the
// runtime client factory reaches "the runtime" the way it reaches real ones.
func writeKubeconfigSecret(t *testing.T, c client.Client, cfg *rest.Config, namespace, runtimeID string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["rt"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["rt"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["rt"] = &clientcmdapi.Context{Cluster: "rt", AuthInfo: "rt"}
	kc.CurrentContext = "rt"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: kubeconfig.SecretName(runtimeID)}, Data: map[string][]byte{kubeconfig.SecretKey: raw}}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// kebRuntime loads the KEB-shaped trial Runtime as runtimeID in namespace.
func kebRuntime(t *testing.T, namespace, runtimeID string) *imv1.Runtime {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		t.Fatal(err)
	}
	rt.Namespace, rt.Name = namespace, runtimeID
	rt.Labels[imv1.LabelKymaName] = runtimeID
	return rt
}

// kebApply applies the Runtime as KEB would with server-side apply (field manager "keb"), all of KEB's fields.
func kebApply(ctx context.Context, c client.Client, rt *imv1.Runtime) error {
	obj := rt.DeepCopy()
	obj.APIVersion, obj.Kind = imv1.GroupVersion.String(), "Runtime"
	obj.ResourceVersion, obj.ManagedFields, obj.Status = "", nil, imv1.RuntimeStatus{}
	return c.Patch(ctx, obj, client.Apply, client.FieldOwner("keb"), client.ForceOwnership) //nolint:staticcheck // the typed client.Apply is what KEB-like clients use
}

// TestRegistryCacheAdaptersIntegration runs the registry cache contracts against a real kube-apiserver: the
// runtime side through the runtime client factory, the garden Secrets through the Gardener client guard, the
// Runtime's spec.imageRegistryCache with server-side apply next to KEB.
func TestRegistryCacheAdaptersIntegration(t *testing.T) {
	cfg, c, _ := startSelfServiceEnv(t)
	t.Run("SourceContract", func(t *testing.T) {
		contract.RunRegistryCacheSourceContract(t, func(t *testing.T) contract.RegistryCacheSourceFixture {
			kcpNS := newNamespace(t, c, "kcp")
			writeKubeconfigSecret(t, c, cfg, kcpNS, "rt-1")
			team := newNamespace(t, c, "team")
			clients := secretClients(c, kcpNS)
			return contract.RegistryCacheSourceFixture{Source: &kube.RegistryCacheSource{Clients: clients},
				RuntimeID: "rt-1", Namespace: team,
				// The runtime's API server is shared with the other tests: its Kyma CRD stays.
				PutKyma: func(ctx context.Context, modules ...string) error { return putRuntimeKyma(ctx, c, modules...) },
				DeleteKyma: func(ctx context.Context) error {
					return client.IgnoreNotFound(c.Delete(ctx, kymaObject()))
				},
				Limited: func(l registrycache.Limits) ports.RegistryCacheSource {
					return &kube.RegistryCacheSource{Clients: clients, Limits: l}
				},
				PutConfig: func(ctx context.Context, name, upstream, size, secret string) error {
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(kube.RegistryCacheConfigGVK)
					u.SetNamespace(team)
					u.SetName(name)
					spec := map[string]any{"upstream": upstream}
					if size != "" {
						spec["volume"] = map[string]any{"size": size}
					}
					if secret != "" {
						spec["secretReferenceName"] = secret
					}
					raw, _ := (&unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
						"metadata": map[string]any{"name": name, "namespace": team}, "spec": spec}}).MarshalJSON()
					return c.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner("customer"))
				},
				PutSecret: func(ctx context.Context, name string, data map[string][]byte) error {
					return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}, Data: data})
				}}
		})
	})
	// The garden side through the guard: Secrets are created, read and deleted by name only (never listed).
	t.Run("GardenContractThroughTheGuard", func(t *testing.T) {
		contract.RunRegistryCacheGardenContract(t, func(t *testing.T) contract.RegistryCacheGardenFixture {
			project := newNamespace(t, c, "garden")
			guarded, err := guard.Secure(cfg, guard.ProjectPolicy(project))
			if err != nil {
				t.Fatal(err)
			}
			gc, err := client.New(guarded, client.Options{Scheme: c.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			g := &gardener.RegistryCacheGarden{Live: gc, Writer: gc, Namespace: project}
			return contract.RegistryCacheGardenFixture{Garden: g, Owners: g,
				ReadSecret: func(ctx context.Context, name string) (map[string][]byte, bool, bool) {
					s := &corev1.Secret{}
					if err := c.Get(ctx, client.ObjectKey{Namespace: project, Name: name}, s); err != nil {
						return nil, false, false
					}
					return s.Data, ptr.Deref(s.Immutable, false), true
				},
				PutForeignSecret: func(ctx context.Context, name string) error {
					return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: project, Name: name}, StringData: map[string]string{"key": "cloud"}})
				}}
		})
	})
	t.Run("LedgerContract", func(t *testing.T) {
		contract.RunRegistryCacheLedgerContract(t, func(t *testing.T) contract.RegistryCacheLedgerFixture {
			ns := newNamespace(t, c, "kcp")
			return contract.RegistryCacheLedgerFixture{Ledger: &kube.RegistryCacheLedger{Live: c, Writer: c}, Namespace: ns}
		})
	})
	t.Run("RuntimesContract", func(t *testing.T) {
		contract.RunRegistryCacheRuntimesContract(t, func(t *testing.T) contract.RegistryCacheRuntimesFixture {
			ns := newNamespace(t, c, "kcp")
			if err := kebApply(t.Context(), c, kebRuntime(t, ns, "rt-1")); err != nil {
				t.Fatal(err)
			}
			ref := ports.RuntimeRef{Namespace: ns, RuntimeID: "rt-1"}
			// With a live reader: a field KEB owns is still never taken over.
			return contract.RegistryCacheRuntimesFixture{Runtimes: &kube.RegistryCacheRuntimes{Client: c, Live: c}, Ref: ref,
				TakeOver: func(ctx context.Context) error {
					rt := kebRuntime(t, ns, "rt-1")
					rt.Spec.ImageRegistryCache = []imv1.ImageRegistryCache{{Name: "keb", Config: imv1.RegistryCacheConfig{Upstream: "ghcr.io"}}}
					return kebApply(ctx, c, rt)
				}}
		})
	})
	t.Run("RegistryCacheFieldManagerNextToKEB", func(t *testing.T) { registryCacheNextToKEB(t, c) })
	t.Run("RegistryCacheTakenOverFromThePreviousManager", func(t *testing.T) { registryCacheTakenOverFromThePreviousManager(t, c) })
	t.Run("SourceLimits", func(t *testing.T) { registryCacheSourceLimits(t, cfg, c) })
}

// registryCacheSourceLimits: against a real API server (which honours the page size for custom resources) the
// list is paginated and stops at the limits: one object more than allowed, or more bytes, applies nothing. It
// logs what a list of 100 objects as the module's users write them takes on the wire.
func registryCacheSourceLimits(t *testing.T, cfg *rest.Config, c client.Client) {
	ctx := t.Context()
	kcpNS := newNamespace(t, c, "kcp")
	writeKubeconfigSecret(t, c, cfg, kcpNS, "rt-limits")
	team := newNamespace(t, c, "team")
	source := func(l registrycache.Limits) *kube.RegistryCacheSource {
		return &kube.RegistryCacheSource{Clients: secretClients(c, kcpNS), Limits: l}
	}
	// Objects of the other subtests share the API server: the limits are set relative to them.
	before, err := source(registrycache.Limits{MaxConfigs: 10000, MaxListBytes: 64 << 20}).Configs(ctx, "rt-limits")
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.RegistryCacheConfigGVK.GroupVersion().String(),
			"kind": kube.RegistryCacheConfigGVK.Kind, "metadata": map[string]any{"name": fmt.Sprintf("cache-%03d", i), "namespace": team},
			"spec": map[string]any{"upstream": fmt.Sprintf("registry-%03d.example.com", i), "secretReferenceName": "rc-secret",
				"volume": map[string]any{"size": "20Gi"}, "garbageCollection": map[string]any{"ttl": "168h"}}}}
		raw, _ := u.MarshalJSON()
		if err := c.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner("kubectl")); err != nil {
			t.Fatal(err)
		}
	}
	total := len(before) + n
	wire := listBytes(t, cfg, team)
	t.Logf("a list of %d RegistryCacheConfigs (upstream, secret, volume, gc ttl; managed fields of one apply) is %d bytes: %d per object",
		n, wire, wire/n)

	got, err := source(registrycache.Limits{MaxConfigs: total}).Configs(ctx, "rt-limits")
	if err != nil || len(got) != total {
		t.Fatalf("at the limit: %d configs, %v; want %d, no error", len(got), err, total)
	}
	var over *registrycache.OverLimit
	got, err = source(registrycache.Limits{MaxConfigs: total - 1}).Configs(ctx, "rt-limits")
	if !errors.As(err, &over) || over.Reason != registrycache.ReasonTooManyConfigs || len(got) != total-1 {
		t.Errorf("one over the limit: %d configs, %v; want TooManyConfigs with %d read", len(got), err, total-1)
	}
	// The API server honours the page size (26): one page tells that there are more than 25.
	got, err = source(registrycache.Limits{MaxConfigs: 25}).Configs(ctx, "rt-limits")
	if !errors.As(err, &over) || over.Reason != registrycache.ReasonTooManyConfigs || len(got) != 25 {
		t.Errorf("25 of %d: %d configs, %v; want TooManyConfigs with 25 read", total, len(got), err)
	}
	_, err = source(registrycache.Limits{MaxConfigs: 10000, MaxListBytes: int64(wire) / 2}).Configs(ctx, "rt-limits")
	if !errors.As(err, &over) || over.Reason != registrycache.ReasonConfigsTooLarge {
		t.Errorf("half the bytes: %v, want ConfigsTooLarge", err)
	}
}

// listBytes is the size of the body of an unpaginated list of the RegistryCacheConfigs in namespace.
func listBytes(t *testing.T, cfg *rest.Config, namespace string) int {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/apis/core.kyma-project.io/v1beta1/namespaces/" + namespace + "/registrycacheconfigs")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list %s: %d %v", resp.Request.URL, resp.StatusCode, err)
	}
	return len(body)
}

// kymaObject is the runtime's Kyma resource kyma-system/default.
func kymaObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kube.KymaGVK)
	u.SetNamespace(registrycache.KymaNamespace)
	u.SetName(registrycache.KymaName)
	return u
}

// putRuntimeKyma writes the runtime's Kyma resource with modules, as the customer does (the namespace is created
// when missing, as lifecycle-manager does).
func putRuntimeKyma(ctx context.Context, c client.Client, modules ...string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: registrycache.KymaNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	list := make([]any, 0, len(modules))
	for _, m := range modules {
		list = append(list, map[string]any{"name": m, "managed": true})
	}
	u := kymaObject()
	u.Object["spec"] = map[string]any{"channel": "regular", "modules": list}
	raw, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return c.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner("customer"), client.ForceOwnership)
}

// registryCacheNextToKEB: KEB's later applies and updates do not remove the operator's caches, and the operator's
// applies do not touch KEB's fields.
func registryCacheNextToKEB(t *testing.T, c client.Client) {
	ctx := t.Context()
	ns := newNamespace(t, c, "kcp")
	rt := kebRuntime(t, ns, "rt-keb")
	if err := kebApply(ctx, c, rt); err != nil {
		t.Fatal(err)
	}
	adapter := &kube.RegistryCacheRuntimes{Client: c}
	ref := ports.RuntimeRef{Namespace: ns, RuntimeID: "rt-keb"}
	mine := []registrycache.Entry{{Name: "docker", Namespace: "team", UID: "u1", Cache: shoot.RegistryCache{Upstream: "docker.io",
		SecretReferenceName: "reg-cache-1", CredentialsSecret: "reg-cache-1"}}}
	read := func() *imv1.Runtime {
		got := &imv1.Runtime{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rt-keb"}, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := adapter.ApplyEntries(ctx, ref, mine); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Spec.ImageRegistryCache) != 1 || !reflect.DeepEqual(got.Spec.Security, rt.Spec.Security) {
		t.Fatalf("after the operator's apply: caches %+v, security %+v", got.Spec.ImageRegistryCache, got.Spec.Security)
	}

	// KEB applies its fields again with a change: the operator's caches stay.
	rt.Spec.Security.Administrators = append(rt.Spec.Security.Administrators, "new-admin@example.com")
	if err := kebApply(ctx, c, rt); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Spec.ImageRegistryCache) != 1 || got.Spec.ImageRegistryCache[0].Config.Upstream != "docker.io" {
		t.Fatalf("KEB's apply removed the operator's caches: %+v", got.Spec.ImageRegistryCache)
	}

	// KEB updates the whole object (read, change, PUT): the caches stay.
	got := read()
	got.Spec.Security.Administrators = []string{"only@example.com"}
	if err := c.Update(ctx, got, client.FieldOwner("keb")); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Spec.ImageRegistryCache) != 1 {
		t.Fatalf("KEB's update removed the operator's caches: %+v", got.Spec.ImageRegistryCache)
	}

	// The operator changes and removes its caches: KEB's fields stay as KEB left them.
	if err := adapter.ApplyEntries(ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	after := read()
	if len(after.Spec.ImageRegistryCache) != 0 || !reflect.DeepEqual(after.Spec.Security.Administrators, []string{"only@example.com"}) ||
		after.Spec.Shoot.Name != rt.Spec.Shoot.Name || !reflect.DeepEqual(after.Labels, got.Labels) {
		t.Fatalf("after the operator removed its caches: caches %+v, administrators %v, shoot %s",
			after.Spec.ImageRegistryCache, after.Spec.Security.Administrators, after.Spec.Shoot.Name)
	}
	for _, m := range after.ManagedFields {
		if m.Manager == imv1.FieldManagerRegistryCache && m.FieldsV1 != nil && len(m.FieldsV1.GetRawBytes()) > 2 {
			var fields map[string]any
			_ = yaml.Unmarshal(m.FieldsV1.GetRawBytes(), &fields)
			if spec, ok := fields["f:spec"].(map[string]any); ok && len(spec) > 0 {
				t.Errorf("the operator still owns spec fields after removing its caches: %s", m.FieldsV1.GetRawBytes())
			}
		}
	}
}

// registryCacheTakenOverFromThePreviousManager: on a runtime adopted from the previous manager, whose registry cache
// controller wrote spec.imageRegistryCache with a full Update (field manager "registrycachecontroller", the entry
// naming the Secret in the runtime), the operator's apply takes the field over instead of reporting a conflict
// forever; with another manager owning it as well, or without a live reader, the conflict stands.
func registryCacheTakenOverFromThePreviousManager(t *testing.T, c client.Client) {
	ctx := t.Context()
	mine := []registrycache.Entry{{Name: "docker", Namespace: "team", UID: "u1", Cache: shoot.RegistryCache{Upstream: "docker.io",
		SecretReferenceName: "reg-cache-1", CredentialsSecret: "reg-cache-1"}}}
	previous := func(t *testing.T, managers ...string) (ports.RuntimeRef, *imv1.Runtime) {
		ns := newNamespace(t, c, "kcp")
		rt := kebRuntime(t, ns, "rt-prev")
		if err := kebApply(ctx, c, rt); err != nil {
			t.Fatal(err)
		}
		for i, m := range managers {
			got := &imv1.Runtime{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rt-prev"}, got); err != nil {
				t.Fatal(err)
			}
			got.Spec.ImageRegistryCache = []imv1.ImageRegistryCache{{Name: "docker", Namespace: "team", UID: "u1",
				Config: imv1.RegistryCacheConfig{Upstream: "docker.io", SecretReferenceName: ptr.To(fmt.Sprintf("creds-in-runtime-%d", i))}}}
			if err := c.Update(ctx, got, client.FieldOwner(m)); err != nil {
				t.Fatal(err)
			}
		}
		return ports.RuntimeRef{Namespace: ns, RuntimeID: "rt-prev"}, rt
	}
	read := func(t *testing.T, ref ports.RuntimeRef) *imv1.Runtime {
		got := &imv1.Runtime{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.RuntimeID}, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Run("only the previous manager owns the field: taken over", func(t *testing.T) {
		ref, rt := previous(t, "registrycachecontroller")
		adapter := &kube.RegistryCacheRuntimes{Client: c, Live: c}
		if err := adapter.ApplyEntries(ctx, ref, mine); err != nil {
			t.Fatalf("apply over the previous manager's entries: %v", err)
		}
		got := read(t, ref)
		if len(got.Spec.ImageRegistryCache) != 1 || ptr.Deref(got.Spec.ImageRegistryCache[0].Config.SecretReferenceName, "") != "reg-cache-1" ||
			!reflect.DeepEqual(got.Spec.Security, rt.Spec.Security) {
			t.Fatalf("after the take-over: caches %+v, security %+v", got.Spec.ImageRegistryCache, got.Spec.Security)
		}
		for _, m := range got.ManagedFields {
			if m.Manager == "registrycachecontroller" && m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.GetRawBytes()), `"f:imageRegistryCache"`) {
				t.Errorf("the previous manager still owns spec.imageRegistryCache: %s", m.FieldsV1.GetRawBytes())
			}
		}
		// From now on the operator's own applies need no take-over, and removing its entries removes the field.
		if err := (&kube.RegistryCacheRuntimes{Client: c}).ApplyEntries(ctx, ref, nil); err != nil {
			t.Fatal(err)
		}
		if got := read(t, ref); len(got.Spec.ImageRegistryCache) != 0 {
			t.Fatalf("caches after the operator removed its entries: %+v", got.Spec.ImageRegistryCache)
		}
	})
	t.Run("another manager wrote it after the previous one: the conflict stands", func(t *testing.T) {
		ref, _ := previous(t, "registrycachecontroller", "someone-else")
		err := (&kube.RegistryCacheRuntimes{Client: c, Live: c}).ApplyEntries(ctx, ref, mine)
		if !errors.Is(err, ports.ErrFieldOwnedByOthers) {
			t.Fatalf("apply over another manager's entries: %v, want ErrFieldOwnedByOthers", err)
		}
		if got := read(t, ref); ptr.Deref(got.Spec.ImageRegistryCache[0].Config.SecretReferenceName, "") != "creds-in-runtime-1" {
			t.Fatalf("the refused apply changed the entries: %+v", got.Spec.ImageRegistryCache)
		}
	})
	t.Run("without a live reader: the conflict stands", func(t *testing.T) {
		ref, _ := previous(t, "registrycachecontroller")
		if err := (&kube.RegistryCacheRuntimes{Client: c}).ApplyEntries(ctx, ref, mine); !errors.Is(err, ports.ErrFieldOwnedByOthers) {
			t.Fatalf("apply without a live reader: %v, want ErrFieldOwnedByOthers", err)
		}
	})
}
