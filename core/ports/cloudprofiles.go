package ports

import "context"

// CloudProfiles reads the garden's cloud profiles. The operator fills the zones of a worker pool that comes without
// any (KEB sends such a pool when its providers configuration lists no zones for the region) from the zones the
// cloud profile offers, as Gardener needs every pool to have at least one.
type CloudProfiles interface {
	// RegionZones returns the zones the named CloudProfile offers in region, in the profile's order (stable: the
	// operator picks the first ones, and the same profile must give the same pick on every reconcile). Empty, and no
	// error, when the profile does not exist, does not list the region or lists it without zones. Read only; errors
	// wrap ErrTransient or ErrForbidden.
	RegionZones(ctx context.Context, profile, region string) ([]string, error)
}
