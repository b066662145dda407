package selfservice

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/testenv"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestAuditLogIntegration: three runtimes with auditLogAccessEnabled claim from a pool of two: two get their own
// tenant (the shoot points at it, the read credentials are in the runtime), the third waits with
// AuditLogPoolEmpty until the landscape adds a tenant. A deleted runtime keeps its tenant through the deletion
// window; the tenant is released when the shoot is gone.
func TestAuditLogIntegration(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	for _, name := range []string{"tenant-a", "tenant-b"} {
		w.addTenant(t, name)
	}
	ids := []string{"a1a1a1a1-0000-4000-8000-000000000a01", "a1a1a1a1-0000-4000-8000-000000000a02", "a1a1a1a1-0000-4000-8000-000000000a03"}
	shoots := map[string]string{ids[0]: "c-al0001", ids[1]: "c-al0002", ids[2]: "c-al0003"}
	for _, id := range ids {
		rt := kebRuntime(t, id, shoots[id])
		rt.Spec.AuditLogAccessEnabled = ptrTo(true)
		if err := w.kcp.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
	}
	var waiting string
	testenv.Eventually(t, provisionTimeout, "two runtimes with a tenant, one waiting for the pool", func() (bool, string) {
		claimed, desc := 0, ""
		waiting = ""
		for _, id := range ids {
			rt := w.runtime(t, id)
			c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady)
			switch {
			case rt.Status.AuditLogCR != "":
				claimed++
			case c != nil && c.Reason == string(lifecycle.ReasonAuditLogPoolEmpty) && rt.Status.State == imv1.RuntimeStatePending:
				waiting = id
			}
			desc += fmt.Sprintf("[%s: auditLogCR %q, %s] ", id, rt.Status.AuditLogCR, describe(rt))
		}
		return claimed == 2 && waiting != "", desc
	})
	if s := w.shoot(t, shoots[waiting]); s != nil {
		t.Errorf("runtime %s waits for a tenant, but its shoot %s was created", waiting, s.Name)
	}
	tenants := map[string]string{}
	for _, id := range ids {
		if id == waiting {
			continue
		}
		rt := w.waitReady(t, id)
		if prev, dup := tenants[rt.Status.AuditLogCR]; dup {
			t.Fatalf("runtimes %s and %s both hold %s", prev, id, rt.Status.AuditLogCR)
		}
		tenants[rt.Status.AuditLogCR] = id
		w.checkDedicated(t, id, shoots[id], rt.Status.AuditLogCR)
	}

	// The landscape adds a tenant: the waiting runtime is woken by the pool's change and provisioned.
	added := time.Now()
	w.addTenant(t, "tenant-c")
	rt := w.waitReady(t, waiting)
	t.Logf("tenant added -> waiting runtime Ready: %s", time.Since(added).Round(time.Millisecond))
	if rt.Status.AuditLogCR != kube.TenantName(kcpNamespace, "tenant-c") {
		t.Errorf("the waiting runtime holds %q, want tenant-c", rt.Status.AuditLogCR)
	}
	w.checkDedicated(t, waiting, shoots[waiting], rt.Status.AuditLogCR)

	// Deleting a runtime keeps its tenant while its cluster waits for deletion; the tenant is released when the
	// shoot is gone after the window.
	gone := ids[0]
	if ids[0] == waiting {
		gone = ids[1]
	}
	held := w.runtime(t, gone).Status.AuditLogCR
	deleted := time.Now()
	if err := w.kcp.Delete(ctx, &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: gone}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "runtime "+gone+" deleted", func() (bool, string) {
		rt := w.runtime(t, gone)
		return rt == nil, describe(rt)
	})
	if s := w.shoot(t, shoots[gone]); s == nil {
		t.Fatalf("shoot %s is gone right after its runtime: no deletion window", shoots[gone])
	}
	if tn := w.tenant(t, held); tn.GetLabels()[kube.LabelOrphaned] == "true" {
		t.Fatalf("tenant %s released while the cluster waits for deletion", held)
	}
	testenv.Eventually(t, 3*time.Minute, "shoot "+shoots[gone]+" deleted after the window", func() (bool, string) {
		s := w.shoot(t, shoots[gone])
		if s == nil {
			return true, ""
		}
		return false, fmt.Sprintf("deletionTimestamp %v, last operation %+v", s.DeletionTimestamp, s.Status.LastOperation)
	})
	testenv.Eventually(t, time.Minute, "tenant "+held+" released", func() (bool, string) {
		tn := w.tenant(t, held)
		return tn.GetLabels()[kube.LabelOrphaned] == "true", fmt.Sprintf("labels %v", tn.GetLabels())
	})
	if since := time.Since(deleted); since < awsWindow {
		t.Errorf("tenant released %s after the Runtime was deleted, before the %s window", since, awsWindow)
	}
	tn := w.tenant(t, held)
	if got, _, _ := unstructured.NestedString(tn.Object, "spec", "assignedToRuntimeID"); got != gone {
		t.Errorf("the released tenant names %q, want still %s (it is never handed to another runtime)", got, gone)
	}
}

// addTenant creates an AuditLog of the pool and its read credentials Secret, as the landscape's audit log
// manager would.
func (w *world) addTenant(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	read := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: name + "-read",
		Labels: map[string]string{auditlog.LabelReadCredentials: name}}, // the pool's opt-in
		StringData: map[string]string{"clientID": name + "-reader", "clientSecret": "read-" + name}}
	if err := w.kcp.Create(ctx, read); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"tenantID": "tid-" + name, "serviceURL": "https://auditlog.example.com/" + name,
		"readCredentialsSecretRef": map[string]any{"name": name + "-read"}}}}
	u.SetGroupVersionKind(kube.AuditLogGVK)
	u.SetNamespace(kcpNamespace)
	u.SetName(name)
	if err := w.kcp.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
}

func (w *world) tenant(t *testing.T, qualified string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kube.AuditLogGVK)
	ns, name := kcpNamespace, qualified[len(kcpNamespace)+1:]
	if err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

func (w *world) shoot(t *testing.T, name string) *gardencorev1beta1.Shoot {
	t.Helper()
	s := &gardencorev1beta1.Shoot{}
	err := w.garden.Get(context.Background(), client.ObjectKey{Namespace: "garden-" + w.project, Name: name}, s)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return s
}

// checkDedicated: the tenant is assigned to the runtime, the shoot's audit log extension points at it, and its
// read credentials are in the runtime.
func (w *world) checkDedicated(t *testing.T, id, shootName, tenantName string) {
	t.Helper()
	tn := w.tenant(t, tenantName)
	assigned, _, _ := unstructured.NestedString(tn.Object, "spec", "assignedToRuntimeID")
	tenantID, _, _ := unstructured.NestedString(tn.Object, "spec", "tenantID")
	if assigned != id {
		t.Errorf("tenant %s is assigned to %q, want %s", tenantName, assigned, id)
	}
	s := w.shoot(t, shootName)
	if s == nil {
		t.Fatalf("shoot %s does not exist", shootName)
	}
	found := false
	for _, e := range s.Spec.Extensions {
		if e.Type == shoot.ExtensionAuditLog && e.ProviderConfig != nil {
			found = true
			var cfg struct {
				TenantID string `json:"tenantID"`
			}
			if err := json.Unmarshal(e.ProviderConfig.Raw, &cfg); err != nil || cfg.TenantID != tenantID {
				t.Errorf("shoot %s audit log tenant %q (%v), want the dedicated %s", shootName, cfg.TenantID, err, tenantID)
			}
		}
	}
	if !found {
		t.Errorf("shoot %s has no audit log extension", shootName)
	}
	testenv.Eventually(t, time.Minute, "read credentials in runtime "+id, func() (bool, string) {
		sec := &corev1.Secret{}
		err := w.runtimeAdmin(t, shootName).Get(context.Background(),
			client.ObjectKey{Namespace: usecase.AuditLogCredentialsNamespace, Name: usecase.AuditLogCredentialsName}, sec)
		if err != nil {
			return false, err.Error()
		}
		name := tenantName[len(kcpNamespace)+1:]
		return string(sec.Data["clientSecret"]) == "read-"+name, fmt.Sprintf("keys %d", len(sec.Data))
	})
}
