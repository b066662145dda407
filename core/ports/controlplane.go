package ports

import (
	"context"
	"errors"
)

// ErrAddressesInvalid: the source of the control plane's egress addresses exists but does not hold CIDRs in the
// documented format. Fixing the source helps; retrying alone does not.
var ErrAddressesInvalid = errors.New("control plane egress addresses invalid")

// ControlPlaneAddresses tells from which addresses the operator and KCP (KEB, lifecycle-manager, ...) reach
// runtime API servers. An API server ACL must always allow them, or the control plane locks itself out.
type ControlPlaneAddresses interface {
	// EgressCIDRs returns the egress CIDRs, in the source's order. A missing source is not an error: it returns
	// nil, and the domain then refuses to apply ACLs. A source that cannot be read as CIDRs returns an error
	// wrapping ErrAddressesInvalid. Transient read failures wrap ErrTransient. It may answer from a cache that
	// lags behind changes by a moment; changes are announced by the source's watch, not by this call.
	EgressCIDRs(ctx context.Context) ([]string, error)
}

// CredentialsMigrator switches shoots from Gardener's legacy SecretBinding to a CredentialsBinding.
type CredentialsMigrator interface {
	// MigrateToCredentialsBinding clears spec.secretBindingName of the managed shoot and sets
	// spec.credentialsBindingName to binding in one update (server-side apply cannot clear a field another manager
	// owns, and Gardener rejects a shoot naming both). It returns false when the shoot has no secretBindingName
	// (nothing to do; so the switch happens exactly once). Gardener accepts the switch only when binding references
	// the same credentials. Errors: ErrShootNotFound, ErrShootNotManaged, ErrShootRejected, ErrTransient.
	MigrateToCredentialsBinding(ctx context.Context, name, binding string) (bool, error)
}
