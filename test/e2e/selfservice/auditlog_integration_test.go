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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// TestAuditLogIntegration, on the audit log manager's AuditLog CRD: three runtimes with auditLogAccessEnabled
// claim from a pool of two approved tenants of their region (next to tenants of another region and not yet
// approved, which nobody gets): two get their own tenant (the shoot's extension and spec.resources point at it, the
// read credentials are in the runtime), the third waits with AuditLogPoolEmpty until the audit log manager adds a
// tenant. A runtime whose tenant the previous infrastructure manager claimed keeps it. A deleted runtime keeps its
// tenant through the deletion window; the tenant is released (spec.orphaned) when the shoot is gone.
func TestAuditLogIntegration(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	w.addTenantIn(t, "tenant-0-other-region", auditlog.StateSiemApproved, "us-east-1")
	w.addTenantIn(t, "tenant-0-pending", auditlog.StatePending, "eu-central-1")
	// The previous manager's claim of runtime "adopted" (both labels, the assignment, and the audit log manager shows
	// it Assigned), written in the order it happens on a landscape: the Runtime exists first. A tenant assigned to a
	// runtime that does not exist, with no cluster either, is released (one way) by the pool's keeper, and that
	// race is not what this test is about. While no free tenant exists the runtime cannot claim another one, so it
	// waits for the pool until the claim is there.
	adopted := "a1a1a1a1-0000-4000-8000-000000000a04"
	w.addTenantIn(t, "tenant-prev", auditlog.StateAssigned, "eu-central-1")
	art := kebRuntime(t, adopted, "c-al0004")
	art.Spec.AuditLogAccessEnabled = ptrTo(true)
	if err := w.kcp.Create(ctx, art); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, provisionTimeout, "the adopted runtime waiting for the pool before the previous claim is written", func() (bool, string) {
		rt := w.runtime(t, adopted)
		c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady)
		return c != nil && c.Reason == string(lifecycle.ReasonAuditLogPoolEmpty), describe(rt)
	})
	prev := w.tenant(t, kube.TenantName(kcpNamespace, "tenant-prev"))
	prev.SetLabels(map[string]string{kube.LabelReservedFor: adopted, kube.LabelReservedAt: "1780000000"})
	if err := unstructured.SetNestedField(prev.Object, adopted, "spec", "assignedToRuntimeID"); err != nil {
		t.Fatal(err)
	}
	if err := w.kcp.Update(ctx, prev); err != nil {
		t.Fatal(err)
	}
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
		return claimed == 2 && waiting != "", desc + w.poolState(t)
	})
	if s := w.shoot(t, shoots[waiting]); s != nil {
		t.Errorf("runtime %s waits for a tenant, but its shoot %s was created", waiting, s.Name)
	}
	for _, name := range []string{"tenant-0-other-region", "tenant-0-pending"} {
		tn := w.tenant(t, kube.TenantName(kcpNamespace, name))
		if got, _, _ := unstructured.NestedString(tn.Object, "spec", "assignedToRuntimeID"); got != "" || len(tn.GetLabels()) != 0 {
			t.Errorf("tenant %s (another region / not approved) was taken: assigned %q, labels %v", name, got, tn.GetLabels())
		}
	}
	if rt := w.waitReady(t, adopted); rt.Status.AuditLogCR != kube.TenantName(kcpNamespace, "tenant-prev") {
		t.Errorf("the adopted runtime holds %q, want the previous manager's tenant-prev", rt.Status.AuditLogCR)
	}
	w.checkDedicated(t, adopted, "c-al0004", kube.TenantName(kcpNamespace, "tenant-prev"))
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
	if orphaned(w.tenant(t, held)) {
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
		return orphaned(tn), fmt.Sprintf("spec %v", tn.Object["spec"])
	})
	if since := time.Since(deleted); since < awsWindow {
		t.Errorf("tenant released %s after the Runtime was deleted, before the %s window", since, awsWindow)
	}
	tn := w.tenant(t, held)
	if got, _, _ := unstructured.NestedString(tn.Object, "spec", "assignedToRuntimeID"); got != gone {
		t.Errorf("the released tenant names %q, want still %s (it is never handed to another runtime)", got, gone)
	}
	if st, _, _ := unstructured.NestedString(tn.Object, "status", "state"); st != string(auditlog.StateAssigned) {
		t.Errorf("the released tenant's status.state is %q: the operator must not write status", st)
	}
}

func orphaned(tn *unstructured.Unstructured) bool {
	o, _, _ := unstructured.NestedBool(tn.Object, "spec", "orphaned")
	return o
}

// addTenant creates an approved AuditLog of the pool for eu-central-1 and its read credentials Secret.
func (w *world) addTenant(t *testing.T, name string) {
	t.Helper()
	w.addTenantIn(t, name, auditlog.StateSiemApproved, "eu-central-1")
}

// addTenantIn creates an AuditLog serving region in state, and its read credentials Secret, as the audit log
// manager does (the opt-in label is the landscape's; the state is written on the status subresource).
func (w *world) addTenantIn(t *testing.T, name string, state auditlog.State, region string) {
	t.Helper()
	ctx := context.Background()
	read := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: name + "-read",
		Labels: map[string]string{auditlog.LabelReadCredentials: name}}, // the pool's opt-in
		StringData: map[string]string{"clientID": name + "-reader", "clientSecret": "read-" + name}}
	if err := w.kcp.Create(ctx, read); err != nil {
		t.Fatal(err)
	}
	// The write credentials the audit log manager stores in the Gardener project (Gardener refuses a shoot whose
	// spec.resources names a Secret that does not exist).
	write := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-" + w.project, Name: name + "-write"},
		StringData: map[string]string{"clientID": name + "-writer", "clientSecret": "write-" + name}}
	if err := w.garden.Create(ctx, write); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"platformRegion": "cf-eu10", "regions": []any{region}, "subaccountID": "sub-" + name,
		"config": map[string]any{"serviceURL": "https://auditlog.example.com/" + name, "gardenerSecretName": name + "-write",
			"readCredsSecretName": name + "-read"}}}}
	u.SetGroupVersionKind(kube.AuditLogGVK)
	u.SetNamespace(kcpNamespace)
	u.SetName(name)
	if err := w.kcp.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	w.setTenantState(t, name, state)
}

// setTenantState writes status.state as the audit log manager does.
func (w *world) setTenantState(t *testing.T, name string, state auditlog.State) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kube.AuditLogGVK)
	u.SetNamespace(kcpNamespace)
	u.SetName(name)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"state":"`+string(state)+`"}}`))
	if err := w.kcp.Status().Patch(context.Background(), u, patch); err != nil {
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

// poolState describes every tenant of the pool (state, assignment, reservation), for a failure's message.
func (w *world) poolState(t *testing.T) string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kube.AuditLogGVK.GroupVersion().WithKind(kube.AuditLogGVK.Kind + "List"))
	if err := w.kcp.List(context.Background(), list, client.InNamespace(kcpNamespace)); err != nil {
		return "pool: " + err.Error()
	}
	out := "pool:"
	for _, u := range list.Items {
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		assigned, _, _ := unstructured.NestedString(u.Object, "spec", "assignedToRuntimeID")
		out += fmt.Sprintf(" [%s: %s, assigned %q, reserved %q]", u.GetName(), state, assigned, u.GetLabels()[kube.LabelReservedFor])
	}
	return out
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

// checkDedicated: the tenant is assigned to the runtime, the shoot's audit log extension carries its subaccount ID
// and service URL and references its write credentials Secret, and its read credentials are in the runtime. Then it
// plays the audit log manager and marks the tenant Assigned.
func (w *world) checkDedicated(t *testing.T, id, shootName, tenantName string) {
	t.Helper()
	tn := w.tenant(t, tenantName)
	assigned, _, _ := unstructured.NestedString(tn.Object, "spec", "assignedToRuntimeID")
	subaccount, _, _ := unstructured.NestedString(tn.Object, "spec", "subaccountID")
	serviceURL, _, _ := unstructured.NestedString(tn.Object, "spec", "config", "serviceURL")
	writeSecret, _, _ := unstructured.NestedString(tn.Object, "spec", "config", "gardenerSecretName")
	if assigned != id || tn.GetLabels()[kube.LabelReservedFor] != id || tn.GetLabels()[kube.LabelReservedAt] == "" {
		t.Errorf("tenant %s is assigned to %q, labels %v; want %s with both reservation labels", tenantName, assigned, tn.GetLabels(), id)
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
				Type, TenantID, ServiceURL, SecretReferenceName string
			}
			err := json.Unmarshal(e.ProviderConfig.Raw, &cfg)
			if err != nil || cfg.Type != "standard" || cfg.TenantID != subaccount || cfg.ServiceURL != serviceURL {
				t.Errorf("shoot %s audit log config %+v (%v), want type standard, the dedicated %s at %s", shootName, cfg, err, subaccount, serviceURL)
			}
			ref := ""
			for _, r := range s.Spec.Resources {
				if r.Name == cfg.SecretReferenceName && r.ResourceRef.Kind == "Secret" {
					ref = r.ResourceRef.Name
				}
			}
			if ref != writeSecret {
				t.Errorf("shoot %s: secretReferenceName %q resolves to Secret %q, want the tenant's %s", shootName, cfg.SecretReferenceName, ref, writeSecret)
			}
		}
	}
	if !found {
		t.Errorf("shoot %s has no audit log extension", shootName)
	}
	w.setTenantState(t, tenantName[len(kcpNamespace)+1:], auditlog.StateAssigned)
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
