package contract

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
)

// AuditLogPoolFixture is one fresh pool with the means to add tenants as the landscape does.
type AuditLogPoolFixture struct {
	Pool ports.AuditLogPool
	// Add creates a free tenant named name as the audit log manager does (regions eu-central-1 and eu-west-1, a
	// subaccount ID, a config with service URL and both Secret names, status.state SiemApproved) and returns its
	// name as the pool reports it (a namespaced pool adds the namespace).
	Add func(ctx context.Context, name string) (string, error)
	// SetState writes status.state of the tenant (pool name) as the audit log manager does.
	SetState func(ctx context.Context, name string, s auditlog.State) error
}

// RunAuditLogPoolContract runs the contract of ports.AuditLogPool against fixtures made by newFixture (one per
// subtest).
func RunAuditLogPoolContract(t *testing.T, newFixture func(t *testing.T) AuditLogPoolFixture) {
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	get := func(t *testing.T, p ports.AuditLogPool, name string) auditlog.Tenant {
		t.Helper()
		pool, err := p.List(t.Context(), ports.ReadLive)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range pool {
			if tn.Name == name {
				return tn
			}
		}
		t.Fatalf("tenant %s not in the pool %+v", name, pool)
		return auditlog.Tenant{}
	}
	setup := func(t *testing.T) (AuditLogPoolFixture, auditlog.Tenant) {
		f := newFixture(t)
		name, err := f.Add(t.Context(), "t1")
		if err != nil {
			t.Fatal(err)
		}
		return f, get(t, f.Pool, name)
	}
	t.Run("a new tenant is read field for field, free for its regions only", func(t *testing.T) {
		_, tn := setup(t)
		if !tn.Free("eu-central-1") || !tn.Free("eu-west-1") || tn.Free("us-east-1") || tn.Version == "" {
			t.Errorf("tenant %+v: want free in its regions, with a version", tn)
		}
		local := tn.Name[strings.LastIndex(tn.Name, "/")+1:]
		if tn.State != auditlog.StateSiemApproved || tn.TenantID != "sub-"+local || tn.ServiceURL != "https://auditlog.example/"+local ||
			tn.SecretName != local+"-write" || tn.ReadCredentials.Name != local+"-read" || tn.ReadCredentials.Namespace == "" {
			t.Errorf("tenant %+v: want the subaccount ID, config and state of the AuditLog", tn)
		}
	})
	t.Run("the audit log manager's state is read; a tenant it has not approved is not free", func(t *testing.T) {
		f, tn := setup(t)
		if err := f.SetState(t.Context(), tn.Name, auditlog.StatePending); err != nil {
			t.Fatal(err)
		}
		if got := get(t, f.Pool, tn.Name); got.State != auditlog.StatePending || got.Free("eu-central-1") || got.Version == tn.Version {
			t.Errorf("tenant %+v: want Pending, not free, a new version", got)
		}
	})
	t.Run("a claim of an unreserved tenant reserves and assigns in one write", func(t *testing.T) {
		f, tn := setup(t)
		c, err := f.Pool.Claim(t.Context(), tn, "rt-1", at)
		if err != nil {
			t.Fatal(err)
		}
		stored := get(t, f.Pool, tn.Name)
		if stored.AssignedTo != "rt-1" || stored.ReservedFor != "rt-1" || !stored.ReservedAt.Equal(at) || stored.Version != c.Version {
			t.Errorf("claimed %+v, stored %+v", c, stored)
		}
	})
	t.Run("an assignment is never changed, even on the current version", func(t *testing.T) {
		f, tn := setup(t)
		c, err := f.Pool.Claim(t.Context(), tn, "rt-1", at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Pool.Claim(t.Context(), c, "rt-2", at); err == nil {
			t.Fatal("a second runtime claimed an assigned tenant")
		}
		if stored := get(t, f.Pool, tn.Name); stored.AssignedTo != "rt-1" {
			t.Errorf("stored %+v, want still assigned to rt-1", stored)
		}
	})
	t.Run("reserve, then claim, each on the version just written", func(t *testing.T) {
		f, tn := setup(t)
		r, err := f.Pool.Reserve(t.Context(), tn, "rt-1", at)
		if err != nil {
			t.Fatal(err)
		}
		if r.ReservedFor != "rt-1" || !r.ReservedAt.Equal(at) || r.Version == tn.Version {
			t.Fatalf("reserved %+v", r)
		}
		c, err := f.Pool.Claim(t.Context(), r, "rt-1", at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		stored := get(t, f.Pool, tn.Name)
		// The reservation is kept as it was: the claim only adds the assignment.
		if c.AssignedTo != "rt-1" || stored.AssignedTo != "rt-1" || stored.ReservedFor != "rt-1" || !stored.ReservedAt.Equal(at) {
			t.Errorf("claimed %+v, stored %+v", c, stored)
		}
	})
	t.Run("a write on an old version fails with ErrConflict and changes nothing", func(t *testing.T) {
		f, tn := setup(t)
		if _, err := f.Pool.Reserve(t.Context(), tn, "rt-1", at); err != nil {
			t.Fatal(err)
		}
		_, err := f.Pool.Reserve(t.Context(), tn, "rt-2", at)
		if !errors.Is(err, ports.ErrConflict) {
			t.Fatalf("second reservation on the old version: %v, want ErrConflict", err)
		}
		if _, err := f.Pool.Claim(t.Context(), tn, "rt-2", at); !errors.Is(err, ports.ErrConflict) {
			t.Fatalf("claim on the old version: %v, want ErrConflict", err)
		}
		if stored := get(t, f.Pool, tn.Name); stored.ReservedFor != "rt-1" || stored.AssignedTo != "" {
			t.Errorf("stored %+v; want reserved for rt-1 only", stored)
		}
	})
	t.Run("unreserve frees the tenant; release sets spec.orphaned, keeps the assignment and leaves status alone", func(t *testing.T) {
		f, tn := setup(t)
		r, err := f.Pool.Reserve(t.Context(), tn, "rt-1", at)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Pool.Unreserve(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		free := get(t, f.Pool, tn.Name)
		if !free.Free("eu-central-1") || !free.ReservedAt.IsZero() || free.ReservedFor != "" {
			t.Fatalf("after unreserve %+v, want free", free)
		}
		r, _ = f.Pool.Reserve(t.Context(), free, "rt-1", at)
		if _, err := f.Pool.Claim(t.Context(), r, "rt-1", at); err != nil {
			t.Fatal(err)
		}
		if err := f.SetState(t.Context(), tn.Name, auditlog.StateAssigned); err != nil {
			t.Fatal(err)
		}
		c := get(t, f.Pool, tn.Name)
		if err := f.Pool.Release(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		stored := get(t, f.Pool, tn.Name)
		if !stored.Orphaned || stored.AssignedTo != "rt-1" || stored.Free("eu-central-1") || stored.State != auditlog.StateAssigned {
			t.Errorf("after release %+v; want orphaned, still assigned, not free, state untouched", stored)
		}
	})
	t.Run("a tenant that does not exist is a conflict, never created", func(t *testing.T) {
		f, tn := setup(t)
		tn.Name += "-gone"
		if _, err := f.Pool.Reserve(t.Context(), tn, "rt-1", at); !errors.Is(err, ports.ErrConflict) {
			t.Errorf("reserve a missing tenant: %v, want ErrConflict", err)
		}
		pool, _ := f.Pool.List(t.Context(), ports.ReadLive)
		if len(pool) != 1 {
			t.Errorf("pool %+v, want only t1", pool)
		}
	})
}

// RuntimeSecretsFixture is a RuntimeSecretWriter with a runtime and a way to read what it holds.
type RuntimeSecretsFixture struct {
	Writer    ports.RuntimeSecretWriter
	RuntimeID string
	// Read returns the data of the Secret in the runtime (nil, false when missing).
	Read func(ctx context.Context, namespace, name string) (map[string][]byte, bool)
}

// RunRuntimeSecretWriterContract runs the contract of ports.RuntimeSecretWriter.
func RunRuntimeSecretWriterContract(t *testing.T, newFixture func(t *testing.T) RuntimeSecretsFixture) {
	t.Run("writes once, then only on change, into a namespace it creates", func(t *testing.T) {
		f := newFixture(t)
		s := ports.RuntimeSecret{Namespace: "kyma-system", Name: "auditlog-read-credentials", Data: map[string][]byte{"k": []byte("v1")}}
		for i, want := range []bool{true, false} {
			wrote, err := f.Writer.EnsureSecret(t.Context(), f.RuntimeID, s)
			if err != nil || wrote != want {
				t.Fatalf("write %d: %v, %v; want %v", i, wrote, err, want)
			}
		}
		s.Data = map[string][]byte{"k": []byte("v2")}
		if wrote, err := f.Writer.EnsureSecret(t.Context(), f.RuntimeID, s); err != nil || !wrote {
			t.Fatalf("changed data: %v, %v; want written", wrote, err)
		}
		if got, ok := f.Read(t.Context(), s.Namespace, s.Name); !ok || string(got["k"]) != "v2" || len(got) != 1 {
			t.Errorf("secret in the runtime %v %v", got, ok)
		}
	})
	t.Run("an unknown runtime is unreachable", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Writer.EnsureSecret(t.Context(), "no-such-runtime", ports.RuntimeSecret{Namespace: "kyma-system", Name: "x"})
		if !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("err %v, want ErrRuntimeUnreachable", err)
		}
	})
}
