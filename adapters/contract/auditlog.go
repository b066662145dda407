package contract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
)

// AuditLogPoolFixture is one fresh pool with the means to add tenants as the landscape does.
type AuditLogPoolFixture struct {
	Pool ports.AuditLogPool
	// Add creates a free tenant named name with a tenant ID and a service URL and returns its name as the pool
	// reports it (a namespaced pool adds the namespace).
	Add func(ctx context.Context, name string) (string, error)
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
	t.Run("a new tenant is free and usable", func(t *testing.T) {
		_, tn := setup(t)
		if !tn.Free("aws", "eu-central-1") || tn.Version == "" {
			t.Errorf("tenant %+v: want free, usable, with a version", tn)
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
		c, err := f.Pool.Claim(t.Context(), r, "rt-1", "c-1")
		if err != nil {
			t.Fatal(err)
		}
		stored := get(t, f.Pool, tn.Name)
		if c.AssignedTo != "rt-1" || stored.AssignedTo != "rt-1" || stored.ShootName != "c-1" || stored.ReservedFor != "rt-1" {
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
		if _, err := f.Pool.Claim(t.Context(), tn, "rt-2", "c-2"); !errors.Is(err, ports.ErrConflict) {
			t.Fatalf("claim on the old version: %v, want ErrConflict", err)
		}
		if stored := get(t, f.Pool, tn.Name); stored.ReservedFor != "rt-1" || stored.AssignedTo != "" {
			t.Errorf("stored %+v; want reserved for rt-1 only", stored)
		}
	})
	t.Run("unreserve frees the tenant; release orphans it and keeps the assignment", func(t *testing.T) {
		f, tn := setup(t)
		r, err := f.Pool.Reserve(t.Context(), tn, "rt-1", at)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Pool.Unreserve(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		free := get(t, f.Pool, tn.Name)
		if !free.Free("", "") || !free.ReservedAt.IsZero() {
			t.Fatalf("after unreserve %+v, want free", free)
		}
		r, _ = f.Pool.Reserve(t.Context(), free, "rt-1", at)
		c, err := f.Pool.Claim(t.Context(), r, "rt-1", "c-1")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Pool.Release(t.Context(), c, at); err != nil {
			t.Fatal(err)
		}
		if stored := get(t, f.Pool, tn.Name); !stored.Orphaned || stored.AssignedTo != "rt-1" || stored.Free("", "") {
			t.Errorf("after release %+v; want orphaned, still assigned, not free", stored)
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
