package ports

import (
	"context"

	"github.com/kyma-project/kim/core/domain/deletion"
)

// CredentialsBindings reads and labels the Gardener CredentialsBindings of the project. They belong to KEB and the
// account cleanup job; the operator only ever adds or removes the label dirty, nothing else (docs/adr/0005).
type CredentialsBindings interface {
	// Get reads the binding named name live (the decisions taken on it are about another component's pool). A
	// missing binding is not an error: it returns deletion.Binding{Exists: false}. Errors wrap ErrTransient or
	// ErrForbidden.
	Get(ctx context.Context, name string) (deletion.Binding, error)
	// SetDirty labels the binding dirty=true if its resourceVersion is still resourceVersion (ErrConflict
	// otherwise); it changes no other label or field. Idempotent on a binding already labelled so.
	SetDirty(ctx context.Context, name, resourceVersion string) error
	// RemoveDirty removes the label dirty under the same precondition. Idempotent on a binding without it.
	RemoveDirty(ctx context.Context, name, resourceVersion string) error
	// UsedBy lists, live, the shoots of the project whose spec.credentialsBindingName is name (what KEB checks
	// before it labels a binding dirty), except the shoot named except.
	UsedBy(ctx context.Context, name, except string) ([]string, error)
}
