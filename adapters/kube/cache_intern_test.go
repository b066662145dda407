package kube

import (
	"encoding/json"
	"testing"
	"unsafe"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// decodeAs decodes a fresh copy of obj's JSON, as a watch does: no string shared with obj or another copy.
func decodeAs[T any](t *testing.T, obj any) *T {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameStorage(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestInternedKeepsEveryValue: the transform changes no value of any object kind the caches hold (what every
// reader decides on), runs the wrapped transform, and is idempotent.
func TestInternedKeepsEveryValue(t *testing.T) {
	rt := keb.WithIdentity(keb.GoldenRuntime(t, "aws-registry-cache"), keb.RuntimeID(1), keb.ShootName(1))
	rt.Finalizers = []string{"infrastructuremanager.kyma-project.io/runtime"}
	rt.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "keb"}}
	gc := keb.GardenerCluster(keb.RuntimeID(1), keb.ShootName(1))
	gc.OwnerReferences = []metav1.OwnerReference{{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime", Name: rt.Name, UID: "u-1"}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-1", Namespace: keb.Namespace,
		Labels: map[string]string{imv1.LabelRuntimeID: keb.RuntimeID(1), "operator.kyma-project.io/managed-by": "infrastructure-manager"}},
		Data: map[string][]byte{"config": []byte("x")}}
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Namespace: "garden-kyma",
		Labels: map[string]string{"kyma-project.io/runtime-id": keb.RuntimeID(1)}, Annotations: map[string]string{"a": "b"}}}
	strip := cache.TransformStripManagedFields()
	for name, obj := range map[string]any{"runtime": rt, "gardenercluster": gc, "secret": sec, "shoot": shoot} {
		t.Run(name, func(t *testing.T) {
			want, err := strip(deepCopy(t, obj))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Interned(strip)(deepCopy(t, obj))
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("interned object differs from the wrapped transform's:\n%+v\nwant\n%+v", got, want)
			}
			again, err := Interned(strip)(got)
			if err != nil || !equality.Semantic.DeepEqual(again, want) {
				t.Errorf("a second pass changed the object (err %v)", err)
			}
		})
	}
}

func deepCopy(t *testing.T, obj any) any {
	t.Helper()
	switch o := obj.(type) {
	case *imv1.Runtime:
		return o.DeepCopy()
	case *imv1.GardenerCluster:
		return o.DeepCopy()
	case *corev1.Secret:
		return o.DeepCopy()
	case *gardencorev1beta1.Shoot:
		return o.DeepCopy()
	}
	t.Fatalf("no deep copy for %T", obj)
	return nil
}

// TestInternedSharesRepeatedStrings: two objects decoded separately share their label keys, short label values,
// namespace and owner kinds after the transform, but not long (ID-like) values, which stay their own.
func TestInternedSharesRepeatedStrings(t *testing.T) {
	tr := Interned(nil)
	objs := make([]*imv1.GardenerCluster, 2)
	for i := range objs {
		gc := keb.GardenerCluster(keb.RuntimeID(1), keb.ShootName(1))
		gc.OwnerReferences = []metav1.OwnerReference{{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime", Name: "x"}}
		objs[i] = decodeAs[imv1.GardenerCluster](t, gc)
		if !sameStorage(objs[i].Namespace, objs[i].Namespace) {
			t.Fatal("unsafe.StringData is not stable")
		}
	}
	if sameStorage(objs[0].Namespace, objs[1].Namespace) {
		t.Fatal("decoded copies already share their namespace: the test cannot tell the transform's effect")
	}
	for _, o := range objs {
		if _, err := tr(o); err != nil {
			t.Fatal(err)
		}
	}
	a, b := objs[0], objs[1]
	if !sameStorage(a.Namespace, b.Namespace) || !sameStorage(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind) {
		t.Error("namespace or owner kind not shared")
	}
	keyOf := func(m map[string]string, k string) string {
		for key := range m {
			if key == k {
				return key
			}
		}
		t.Fatalf("no key %s", k)
		return ""
	}
	if !sameStorage(keyOf(a.Labels, imv1.LabelRegion), keyOf(b.Labels, imv1.LabelRegion)) {
		t.Error("label key not shared")
	}
	if !sameStorage(a.Labels[imv1.LabelRegion], b.Labels[imv1.LabelRegion]) {
		t.Error("short label value not shared")
	}
	if sameStorage(a.Labels[imv1.LabelRuntimeID], b.Labels[imv1.LabelRuntimeID]) {
		t.Error("a long, ID-like label value was interned")
	}
	if !sameStorage(keyOf(a.Annotations, imv1.AnnotationSKRDomain), keyOf(b.Annotations, imv1.AnnotationSKRDomain)) {
		t.Error("annotation key not shared")
	}
}
