package auditlogpool

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kimfake "github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
)

// The pool controller on the skeleton: a tenant is kept even when its AuditLog is not (or no longer) in the cache,
// a reservation of a runtime that is gone is given back, and a claimed tenant is looked at again after Resync.
func TestAuditLogPoolReconcilerOnTheSkeleton(t *testing.T) {
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := kimfake.NewClock(now)
	pool := kimfake.NewAuditLogPool(
		auditlog.Tenant{Name: "kcp-system/al-1", ReservedFor: "rt-gone", ReservedAt: now.Add(-time.Hour), TenantID: "t1", ServiceURL: "https://a"},
		auditlog.Tenant{Name: "kcp-system/al-2", State: auditlog.StateAssigned, AssignedTo: "rt-1", ReservedFor: "rt-1", TenantID: "t2", ServiceURL: "https://b", SecretName: "w2"})
	runtimes := kimfake.NewAuditLogRuntimes()
	runtimes.Set("rt-1", ports.AuditLogOwner{Enabled: true, ShootName: "shoot-1"})
	deps := Deps{Clock: clock, Pool: pool, Kind: schema.GroupVersionKind{Group: "auditlogmanager.kyma-project.io", Version: "v1beta1", Kind: "AuditLog"},
		TenantName: func(ns, name string) string { return ns + "/" + name }}
	keep := &usecase.AuditLogKeeper{Pool: pool, Runtimes: runtimes, Shoots: kimfake.NewGarden(clock), Credentials: kimfake.NewKCPSecrets(),
		Writer: kimfake.NewRuntimeSecrets("rt-1")}
	kcp := fake.NewClientBuilder().WithScheme(scheme).Build() // no AuditLog objects: every reconcile goes through Gone
	r := NewReconciler(kcp, kcp, deps, keep, NewMetrics(nil))
	reconcile := func(name string) ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: name}})
		if err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
		return res
	}

	reconcile("al-1")
	if got, _ := pool.Tenant("kcp-system/al-1"); got.ReservedFor != "" {
		t.Errorf("the reservation of a runtime that is gone was kept: %+v", got)
	}
	if res := reconcile("al-2"); res.RequeueAfter != Resync {
		t.Errorf("a claimed tenant is requeued after %s, want Resync (%s)", res.RequeueAfter, Resync)
	}
	if got, _ := pool.Tenant("kcp-system/al-2"); got.AssignedTo != "rt-1" || got.Orphaned {
		t.Errorf("the tenant of a living runtime changed: %+v", got)
	}
}
