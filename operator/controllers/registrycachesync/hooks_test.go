package registrycachesync

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kimfake "github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The registry cache controller on the skeleton: a Runtime that is gone still has its garden copies collected
// (Gone), and a present Runtime is synced without its status being written (the Runtime controller owns it).
func TestRegistryCacheReconcilerOnTheSkeleton(t *testing.T) {
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	const interval = time.Hour
	ledger := kimfake.NewRegistryCacheLedger()
	newReconciler := func(kcp client.Client, runtimes *kimfake.RegistryCacheRuntimes, garden *kimfake.RegistryCacheGarden) *Reconciler {
		sync := &usecase.RegistryCacheSync{Runtimes: runtimes, Source: kimfake.NewRegistryCacheSource(), Garden: garden, Ledger: ledger,
			Interval: interval}
		return NewReconciler(kcp, kcp, clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)), sync, NewMetrics(nil), nil)
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "rt-1"}}

	t.Run("the copies of a Runtime that is gone are collected", func(t *testing.T) {
		garden := kimfake.NewRegistryCacheGarden()
		copyOf := registrycache.GardenSecret{Name: registrycache.SecretPrefix + "abc", RuntimeID: "rt-1", ShootName: "shoot-1",
			Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
		if err := ledger.Record(context.Background(), ports.RuntimeRef{Namespace: req.Namespace, RuntimeID: req.Name},
			[]registrycache.GardenSecret{copyOf}); err != nil {
			t.Fatal(err)
		}
		if _, err := garden.EnsureSecret(context.Background(), copyOf); err != nil {
			t.Fatal(err)
		}
		r := newReconciler(fake.NewClientBuilder().WithScheme(scheme).Build(), kimfake.NewRegistryCacheRuntimes(), garden)
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if garden.Exists(copyOf.Name) {
			t.Errorf("the garden copy %s of a Runtime that is gone was not collected", copyOf.Name)
		}
	})

	t.Run("a present Runtime is synced and requeued around the interval, its status untouched", func(t *testing.T) {
		rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
		kcp := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rt).WithStatusSubresource(rt).Build()
		before := &imv1.Runtime{}
		if err := kcp.Get(context.Background(), req.NamespacedName, before); err != nil {
			t.Fatal(err)
		}
		runtimes := kimfake.NewRegistryCacheRuntimes()
		runtimes.Set(ports.RuntimeRef{Namespace: req.Namespace, RuntimeID: req.Name}, ports.RegistryCacheRuntime{Exists: true,
			ShootName: "shoot-1"})
		res, err := newReconciler(kcp, runtimes, kimfake.NewRegistryCacheGarden()).Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if res.RequeueAfter < interval*9/10 || res.RequeueAfter > interval*11/10 {
			t.Errorf("requeue after %s, want the interval %s ±10%%", res.RequeueAfter, interval)
		}
		after := &imv1.Runtime{}
		if err := kcp.Get(context.Background(), req.NamespacedName, after); err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("the Runtime was written (resourceVersion %s -> %s); the registry cache controller writes no status",
				before.ResourceVersion, after.ResourceVersion)
		}
	})
}
