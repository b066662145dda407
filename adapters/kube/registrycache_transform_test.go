package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The cached Runtime keeps exactly what ownsCaches reads, and nothing else of managedFields, however often the cache
// runs it through the transform.
func TestRuntimeCacheTransformKeepsTheRegistryCacheOwnership(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		f := &metav1.FieldsV1{}
		f.SetRawBytes([]byte(fields))
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: f}
	}
	rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt", ManagedFields: []metav1.ManagedFieldsEntry{
		entry("keb", `{"f:spec":{"f:shoot":{}}}`),
		entry(imv1.FieldManagerRegistryCache, `{"f:spec":{"f:imageRegistryCache":{}}}`),
		entry("kim", `{"f:status":{}}`),
	}}}
	if !ownsCaches(rt) {
		t.Fatal("the fixture does not own the caches")
	}
	for i := range 2 {
		out, err := RuntimeCacheTransform(rt)
		if err != nil {
			t.Fatal(err)
		}
		rt = out.(*imv1.Runtime)
		if len(rt.ManagedFields) != 1 || rt.ManagedFields[0].Manager != imv1.FieldManagerRegistryCache {
			t.Fatalf("pass %d: managedFields %+v, want only the registry cache's entry", i+1, rt.ManagedFields)
		}
		if !ownsCaches(rt) {
			t.Fatalf("pass %d: the ownership of the caches is lost", i+1)
		}
	}
	none := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{entry("keb", `{}`)}}}
	if out, _ := RuntimeCacheTransform(none); len(out.(*imv1.Runtime).ManagedFields) != 0 || ownsCaches(none) {
		t.Fatalf("a Runtime without the registry cache's entry keeps %+v", out.(*imv1.Runtime).ManagedFields)
	}
}
