package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestRegistryCacheLedgerReadsTheCacheOnlyWhenAsked: Copies with ReadCached reads the manager's cache (no KCP
// request, issue 29), with ReadLive the API server; the writes decide on the API server's record.
func TestRegistryCacheLedgerReadsTheCacheOnlyWhenAsked(t *testing.T) {
	ref := ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rt-1"}
	record := func(names ...string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: RegistryCacheLedgerName(ref.RuntimeID),
			Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue, imv1.LabelRuntimeID: ref.RuntimeID, LabelRegistryCacheLedger: "true"}},
			Data: map[string]string{}}
		for _, n := range names {
			cm.Data[n] = "c-1"
		}
		return cm
	}
	cache := &countingReader{Reader: fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(record("reg-cache-stale")).Build()}
	api := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(record("reg-cache-a")).Build()
	live := &countingReader{Reader: api}
	l := &RegistryCacheLedger{Cached: cache, Live: live, Writer: api}

	got, err := l.Copies(t.Context(), ref, ports.ReadCached)
	if err != nil || len(got) != 1 || got[0].Name != "reg-cache-stale" || live.gets != 0 || cache.gets != 1 {
		t.Fatalf("Copies(ReadCached): %+v, err %v, live reads %d, cached reads %d; want the cache's record and no live read", got, err, live.gets, cache.gets)
	}
	got, err = l.Copies(t.Context(), ref, ports.ReadLive)
	if err != nil || len(got) != 1 || got[0].Name != "reg-cache-a" || live.gets != 1 {
		t.Fatalf("Copies(ReadLive): %+v, err %v, live reads %d; want the API server's record", got, err, live.gets)
	}
	// Forget decides on the API server's record: the name only the cache shows is not what empties it.
	if err := l.Forget(t.Context(), ref, []string{"reg-cache-a"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Copies(t.Context(), ref, ports.ReadLive); len(got) != 0 {
		t.Errorf("after Forget: %+v", got)
	}
	if cache.gets != 1 {
		t.Errorf("the writes read the cache %d times, want never", cache.gets-1)
	}
}
