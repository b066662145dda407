package contract

import (
	"errors"
	"testing"

	"github.com/kyma-project/kim/core/ports"
)

// CredentialsMigratorFixture is one ports.CredentialsMigrator with a garden behind it.
type CredentialsMigratorFixture struct {
	Migrator ports.CredentialsMigrator
	// PutLegacy stores a shoot named name that references a SecretBinding; managed says whether it carries the
	// operator's marks. It returns the CredentialsBinding that references the same credentials.
	PutLegacy func(t *testing.T, name string, managed bool) (binding string)
	// Bindings reads the shoot's secretBindingName and credentialsBindingName, bypassing Migrator.
	Bindings func(t *testing.T, name string) (secretBinding, credentialsBinding string)
	// OtherCredentials is a CredentialsBinding that references other credentials than PutLegacy's shoots use.
	OtherCredentials string
}

// RunCredentialsMigratorContract runs the contract against fixtures made by newFixture (one per subtest).
func RunCredentialsMigratorContract(t *testing.T, newFixture func(t *testing.T) CredentialsMigratorFixture) {
	t.Run("a shoot with a SecretBinding is switched exactly once", func(t *testing.T) {
		f := newFixture(t)
		binding := f.PutLegacy(t, "cm-legacy", true)
		migrate := func() (bool, error) {
			// Gardener may write the new shoot meanwhile: a conflict is retried, as callers do.
			return UntilNoConflict(func() (bool, error) { return f.Migrator.MigrateToCredentialsBinding(t.Context(), "cm-legacy", binding) })
		}
		migrated, err := migrate()
		if err != nil || !migrated {
			t.Fatalf("first migration: %v, %v; want true, nil", migrated, err)
		}
		if sb, cb := f.Bindings(t, "cm-legacy"); sb != "" || cb != binding {
			t.Errorf("after migration: secretBindingName %q, credentialsBindingName %q; want \"\", %q", sb, cb, binding)
		}
		migrated, err = migrate()
		if err != nil || migrated {
			t.Errorf("second migration: %v, %v; want false, nil", migrated, err)
		}
	})
	t.Run("a missing shoot is ErrShootNotFound", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.Migrator.MigrateToCredentialsBinding(t.Context(), "cm-missing", "b"); !errors.Is(err, ports.ErrShootNotFound) {
			t.Errorf("got %v, want ErrShootNotFound", err)
		}
	})
	t.Run("a shoot without the operator's marks is not touched", func(t *testing.T) {
		f := newFixture(t)
		binding := f.PutLegacy(t, "cm-foreign", false)
		if _, err := f.Migrator.MigrateToCredentialsBinding(t.Context(), "cm-foreign", binding); !errors.Is(err, ports.ErrShootNotManaged) {
			t.Errorf("got %v, want ErrShootNotManaged", err)
		}
		if sb, cb := f.Bindings(t, "cm-foreign"); sb == "" || cb != "" {
			t.Errorf("foreign shoot changed: %q, %q", sb, cb)
		}
	})
	t.Run("a binding with other credentials is rejected and changes nothing", func(t *testing.T) {
		f := newFixture(t)
		f.PutLegacy(t, "cm-other", true)
		_, err := UntilNoConflict(func() (bool, error) {
			return f.Migrator.MigrateToCredentialsBinding(t.Context(), "cm-other", f.OtherCredentials)
		})
		if !errors.Is(err, ports.ErrShootRejected) {
			t.Errorf("got %v, want ErrShootRejected", err)
		}
		if sb, cb := f.Bindings(t, "cm-other"); sb == "" || cb != "" {
			t.Errorf("rejected migration changed the shoot: %q, %q", sb, cb)
		}
	})
}
