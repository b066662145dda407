package contract

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// CloudProfilesFixture is a garden whose cloud profiles a test adds.
type CloudProfilesFixture struct {
	Profiles ports.CloudProfiles
	// AddProfile adds a cloud profile named name that lists the regions given, each with its zones in that order (a
	// region with none is listed without zones).
	AddProfile func(t *testing.T, name string, regions map[string][]string)
}

// RunCloudProfilesContract runs the CloudProfiles contract against fixtures made by newFixture.
func RunCloudProfilesContract(t *testing.T, newFixture func(t *testing.T) CloudProfilesFixture) {
	n := 0
	name := func() string { n++; return fmt.Sprintf("contract-zones-%d", n) }
	zones := func(t *testing.T, f CloudProfilesFixture, profile, region string) []string {
		t.Helper()
		z, err := f.Profiles.RegionZones(t.Context(), profile, region)
		require.NoError(t, err)
		return z
	}
	t.Run("the zones of a region come in the profile's order, the same on every read", func(t *testing.T) {
		f, p := newFixture(t), name()
		// Not sorted: the operator picks the first zones, so the order must be the profile's, not a sorted one.
		f.AddProfile(t, p, map[string][]string{"eu-west-1": {"eu-west-1c", "eu-west-1a", "eu-west-1b"}, "us-east-1": {"us-east-1a"}})
		require.Equal(t, []string{"eu-west-1c", "eu-west-1a", "eu-west-1b"}, zones(t, f, p, "eu-west-1"))
		require.Equal(t, []string{"eu-west-1c", "eu-west-1a", "eu-west-1b"}, zones(t, f, p, "eu-west-1"))
		require.Equal(t, []string{"us-east-1a"}, zones(t, f, p, "us-east-1"), "each region has its own zones")
	})
	t.Run("a region the profile does not list, or lists without zones, has none", func(t *testing.T) {
		f, p := newFixture(t), name()
		f.AddProfile(t, p, map[string][]string{"eu-west-1": {"eu-west-1a"}, "eu-north-1": nil})
		require.Empty(t, zones(t, f, p, "eu-north-1"))
		require.Empty(t, zones(t, f, p, "ap-south-1"))
	})
	t.Run("a profile that does not exist has no zones and is no error", func(t *testing.T) {
		f, p := newFixture(t), name()
		f.AddProfile(t, p, map[string][]string{"eu-west-1": {"eu-west-1a"}})
		require.Empty(t, zones(t, f, "no-such-profile", "eu-west-1"))
	})
}
