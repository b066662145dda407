package contract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/ports"
)

// SeedsFixture is a garden with seeds.
type SeedsFixture struct {
	Seeds ports.Seeds
	// Available is a provider and region with a ready seed that accepts shoots; None one without any seed.
	Available, None [2]string
	// AddHidden adds a seed for provider and region that does not accept new shoots (not visible to scheduling).
	AddHidden func(t *testing.T, provider, region string)
	// Seed is the name of an existing seed and SeedRegion its region.
	Seed, SeedRegion string
}

// RunSeedsContract runs the Seeds contract against fixtures made by newFixture.
func RunSeedsContract(t *testing.T, newFixture func(t *testing.T) SeedsFixture) {
	available := func(t *testing.T, f SeedsFixture, pr [2]string) bool {
		t.Helper()
		ok, err := f.Seeds.SeedAvailable(t.Context(), pr[0], pr[1])
		require.NoError(t, err)
		return ok
	}
	t.Run("a region with a seed that accepts shoots is available, one without is not", func(t *testing.T) {
		f := newFixture(t)
		require.True(t, available(t, f, f.Available))
		require.False(t, available(t, f, f.None))
		require.False(t, available(t, f, [2]string{"another-provider", f.Available[1]}), "another provider's seed does not count")
	})
	t.Run("a seed that does not accept new shoots is not available", func(t *testing.T) {
		f := newFixture(t)
		f.AddHidden(t, f.None[0], f.None[1])
		require.False(t, available(t, f, f.None))
	})
	t.Run("a seed's region is known by its name; an unknown seed has none", func(t *testing.T) {
		f := newFixture(t)
		region, err := f.Seeds.SeedRegion(t.Context(), f.Seed)
		require.NoError(t, err)
		require.Equal(t, f.SeedRegion, region)
		region, err = f.Seeds.SeedRegion(t.Context(), "no-such-seed")
		require.NoError(t, err)
		require.Empty(t, region)
	})
}
