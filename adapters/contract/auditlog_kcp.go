package contract

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
)

// AuditLogRuntimesFixture is a KCP with the means to create, change and delete Runtimes as KEB and the operator do.
type AuditLogRuntimesFixture struct {
	Runtimes ports.AuditLogRuntimes
	// Put creates the Runtime runtimeID, or changes it, in the first watched namespace: its shoot name, its
	// auditLogAccessEnabled (o.Enabled) and its status.provisioningCompleted (o.Provisioned). o.Exists is ignored.
	Put func(ctx context.Context, runtimeID string, o ports.AuditLogOwner) error
	// PutElsewhere is Put in another watched namespace.
	PutElsewhere func(ctx context.Context, runtimeID string, o ports.AuditLogOwner) error
	// Delete removes the Runtime runtimeID (from wherever Put or PutElsewhere created it) and returns once it is
	// gone from the API server.
	Delete func(ctx context.Context, runtimeID string) error
}

// RunAuditLogRuntimesContract runs the contract of ports.AuditLogRuntimes against fixtures made by newFixture (one
// per subtest). Every Lookup follows a write at once: the port asks the API server, not a cache.
func RunAuditLogRuntimesContract(t *testing.T, newFixture func(t *testing.T) AuditLogRuntimesFixture) {
	lookup := func(t *testing.T, f AuditLogRuntimesFixture, id string) ports.AuditLogOwner {
		t.Helper()
		o, err := f.Runtimes.Lookup(t.Context(), id)
		if err != nil {
			t.Fatalf("Lookup %s: %v", id, err)
		}
		return o
	}
	t.Run("an unknown runtime does not exist, and that is no error", func(t *testing.T) {
		f := newFixture(t)
		if o := lookup(t, f, "rt-unknown"); o != (ports.AuditLogOwner{}) {
			t.Errorf("unknown runtime: %+v, want the zero owner", o)
		}
	})
	t.Run("a runtime is reported as it is, every change at once", func(t *testing.T) {
		f := newFixture(t)
		want := ports.AuditLogOwner{Exists: true, Enabled: true, ShootName: "c-1"}
		if err := f.Put(t.Context(), "rt-1", want); err != nil {
			t.Fatal(err)
		}
		if o := lookup(t, f, "rt-1"); o != want {
			t.Errorf("new runtime: %+v, want %+v", o, want)
		}
		want.Provisioned = true
		if err := f.Put(t.Context(), "rt-1", want); err != nil {
			t.Fatal(err)
		}
		if o := lookup(t, f, "rt-1"); o != want {
			t.Errorf("provisioned: %+v, want %+v", o, want)
		}
		want.Enabled = false
		if err := f.Put(t.Context(), "rt-1", want); err != nil {
			t.Fatal(err)
		}
		if o := lookup(t, f, "rt-1"); o != want {
			t.Errorf("access switched off: %+v, want %+v", o, want)
		}
		if err := f.Delete(t.Context(), "rt-1"); err != nil {
			t.Fatal(err)
		}
		if o := lookup(t, f, "rt-1"); o.Exists {
			t.Errorf("deleted runtime: %+v, want it gone", o)
		}
	})
	t.Run("runtimes of every watched namespace are found", func(t *testing.T) {
		f := newFixture(t)
		want := ports.AuditLogOwner{Exists: true, Enabled: true, Provisioned: true, ShootName: "c-2"}
		if err := f.PutElsewhere(t.Context(), "rt-2", want); err != nil {
			t.Fatal(err)
		}
		if o := lookup(t, f, "rt-2"); o != want {
			t.Errorf("runtime of another watched namespace: %+v, want %+v", o, want)
		}
		if o := lookup(t, f, "rt-1"); o.Exists {
			t.Errorf("rt-1 was never created: %+v", o)
		}
	})
}

// AuditLogCredentialsFixture is a KCP with the means to write Secrets as the landscape does.
type AuditLogCredentialsFixture struct {
	Credentials ports.AuditLogCredentials
	// Namespace is where the subtest's Secrets are; OtherNamespace is another one, holding none.
	Namespace, OtherNamespace string
	// Put creates or replaces the Secret ref with exactly labels and data.
	Put func(ctx context.Context, ref auditlog.SecretRef, labels map[string]string, data map[string][]byte) error
}

// RunAuditLogCredentialsContract runs the contract of ports.AuditLogCredentials against fixtures made by newFixture
// (one per subtest). Every Read follows a write at once: the port asks the API server, not a cache.
func RunAuditLogCredentialsContract(t *testing.T, newFixture func(t *testing.T) AuditLogCredentialsFixture) {
	equalData := func(a, b map[string][]byte) bool {
		return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
	}
	t.Run("a missing Secret is ErrSecretNotFound", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Credentials.Read(t.Context(), auditlog.SecretRef{Namespace: f.Namespace, Name: "tenant-read"})
		if !errors.Is(err, ports.ErrSecretNotFound) || errors.Is(err, ports.ErrTransient) {
			t.Errorf("missing Secret: %v, want ErrSecretNotFound only", err)
		}
	})
	t.Run("labels and data are read as written, every change at once", func(t *testing.T) {
		f := newFixture(t)
		ref := auditlog.SecretRef{Namespace: f.Namespace, Name: "tenant-read"}
		labels := map[string]string{auditlog.LabelReadCredentials: "tenant-1"}
		data := map[string][]byte{"clientid": []byte("id"), "clientsecret": []byte("s3cret")}
		if err := f.Put(t.Context(), ref, labels, data); err != nil {
			t.Fatal(err)
		}
		s, err := f.Credentials.Read(t.Context(), ref)
		if err != nil || !maps.Equal(s.Labels, labels) || !equalData(s.Data, data) {
			t.Errorf("Read: %v, labels %v, %d data keys; want %v and the data written", err, s.Labels, len(s.Data), labels)
		}
		data = map[string][]byte{"clientid": []byte("id"), "clientsecret": []byte("rotated")}
		if err := f.Put(t.Context(), ref, nil, data); err != nil {
			t.Fatal(err)
		}
		s, err = f.Credentials.Read(t.Context(), ref)
		if err != nil || len(s.Labels) != 0 || !equalData(s.Data, data) {
			t.Errorf("after a change: %v, labels %v; want no labels and the new data", err, s.Labels)
		}
	})
	t.Run("the namespace of the reference counts", func(t *testing.T) {
		f := newFixture(t)
		if err := f.Put(t.Context(), auditlog.SecretRef{Namespace: f.Namespace, Name: "tenant-read"}, nil, map[string][]byte{"k": []byte("v")}); err != nil {
			t.Fatal(err)
		}
		_, err := f.Credentials.Read(t.Context(), auditlog.SecretRef{Namespace: f.OtherNamespace, Name: "tenant-read"})
		if !errors.Is(err, ports.ErrSecretNotFound) {
			t.Errorf("the same name in another namespace: %v, want ErrSecretNotFound", err)
		}
	})
}
