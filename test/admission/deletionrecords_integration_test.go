package admission_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/deletion"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// typedAs is a client with the operator's API types acting as cfg's identity.
func typedAs(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := imv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deletionRecord(name string) *imv1.DeletionRecord {
	at := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	return &imv1.DeletionRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: name},
		Spec: imv1.DeletionRecordSpec{RuntimeID: "rt-" + name, ShootUID: "uid-" + name, MarkedAt: at, DueAt: at}}
}

// refused tells whether err is the admission policy's refusal (RBAC allowed the request).
func refused(err error) bool {
	return err != nil && (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
}

// TestIntegrationOnlyTheOperatorWritesDeletionRecords applies config/admission's DeletionRecord policy to a real
// kube-apiserver: the operator, with exactly the bundle's permissions as kcp-system/kim-controller-manager, creates,
// updates and deletes records and marks the record migration done; a component whose roles grant cluster-admin in
// kcp-system can do none of it, and in particular cannot re-arm the migration by deleting its marker (nor can the
// operator's own identity); a member of system:masters (break-glass) can.
func TestIntegrationOnlyTheOperatorWritesDeletionRecords(t *testing.T) {
	api := startOwnAPIServer(t)
	ctx := context.Background()
	applyManifest(t, api.client, filepath.Join("..", "..", "config", "admission", "deletionrecords_operator_only.yaml"), "", "")
	bindClusterAdminInKCPSystem(t, api.client, "some-operator")
	intruderCfg := rest.CopyConfig(api.cfg)
	intruderCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kcp-system:some-operator",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kcp-system", "system:authenticated"}}
	intruder := typedAs(t, intruderCfg)
	opCfg, err := testenv.GrantBundleKCP(ctx, testenv.RepoRoot(), api.cfg, []string{"kcp-system"})
	if err != nil {
		t.Fatal(err)
	}
	if opCfg.Impersonate.UserName != "system:serviceaccount:kcp-system:kim-controller-manager" {
		t.Fatalf("the bundle's identity is %q: the policy names system:serviceaccount:kcp-system:kim-controller-manager", opCfg.Impersonate.UserName)
	}
	operator := typedAs(t, opCfg)
	admin := typedAs(t, api.cfg)

	// The policy takes effect a moment after it is created.
	var refusal error
	testenv.Eventually(t, 30*time.Second, "the policy refuses a component with cluster-admin in kcp-system", func() (bool, string) {
		refusal = intruder.Create(ctx, deletionRecord("probe"), client.DryRunAll)
		return refused(refusal), errString(refusal)
	})
	if !strings.Contains(refusal.Error(), "only system:serviceaccount:kcp-system:kim-controller-manager may create, change or delete a DeletionRecord, not system:serviceaccount:kcp-system:some-operator") {
		t.Errorf("the refusal does not say who may: %v", refusal)
	}

	// The operator's own writes, through its adapter.
	records := &kube.DeletionRecords{Live: operator, Writer: operator, Namespaces: []string{"kcp-system"}, Namespace: "kcp-system"}
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	rec := deletion.KCPRecord{RuntimeID: "rt-1", RuntimeNamespace: "kcp-system", ShootName: "c-1", ShootUID: "uid-1", MarkedAt: at, DueAt: at.Add(72 * time.Hour)}
	if err := records.Put(ctx, rec); err != nil {
		t.Fatalf("the operator creates a record: %v", err)
	}
	rec.DueAt = rec.DueAt.Add(time.Hour)
	if err := records.Put(ctx, rec); err != nil {
		t.Fatalf("the operator replaces a record: %v", err)
	}
	if err := records.SetMigrated(ctx, at); err != nil {
		t.Fatalf("the operator marks the migration done: %v", err)
	}

	// Everyone else: create, change, delete, delete the marker.
	stored := &imv1.DeletionRecord{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "kcp-system", Name: "c-1"}, stored); err != nil {
		t.Fatal(err)
	}
	if err := intruder.Create(ctx, deletionRecord("c-forged")); !refused(err) {
		t.Errorf("another component creates a record: %v, want the policy's refusal", err)
	}
	early := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"dueAt":"2026-11-01T10:00:00Z"}}`))
	if err := intruder.Patch(ctx, stored.DeepCopy(), early); !refused(err) {
		t.Errorf("another component moves a record's due time: %v, want the policy's refusal", err)
	}
	if err := intruder.Delete(ctx, stored.DeepCopy()); !refused(err) {
		t.Errorf("another component deletes a record: %v, want the policy's refusal", err)
	}
	if err := intruder.DeleteAllOf(ctx, &imv1.DeletionRecord{}, client.InNamespace("kcp-system")); !refused(err) {
		t.Errorf("another component deletes the collection: %v, want the policy's refusal", err)
	}
	marker := &imv1.DeletionRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: kube.MigrationRecordName}}
	if err := intruder.Delete(ctx, marker.DeepCopy()); !refused(err) {
		t.Errorf("another component deletes the migration marker: %v, want the policy's refusal", err)
	}
	if err := operator.Delete(ctx, marker.DeepCopy()); !refused(err) || !strings.Contains(err.Error(), "would run the migration again") {
		t.Errorf("the operator's identity deletes the migration marker: %v, want the policy's refusal", err)
	}
	if done, err := records.Migrated(ctx); err != nil || !done {
		t.Errorf("after the attempts the migration reads done=%v (%v), want still done", done, err)
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil || !stored.Spec.DueAt.Time.Equal(rec.DueAt) {
		t.Errorf("record after the attempts: due %s (%v), want %s", stored.Spec.DueAt, err, rec.DueAt)
	}

	// The operator deletes records (a withdrawn deletion); break-glass administrators may delete the marker.
	if err := records.Withdraw(ctx, "c-1", "uid-1"); err != nil {
		t.Errorf("the operator withdraws a record: %v", err)
	}
	if err := admin.Delete(ctx, marker.DeepCopy()); err != nil {
		t.Errorf("a member of system:masters deletes the marker: %v, want allowed", err)
	}
}
