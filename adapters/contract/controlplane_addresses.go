package contract

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/ports"
)

// AddressesFixture is one fresh ports.ControlPlaneAddresses with the means to change its source.
type AddressesFixture struct {
	Addresses ports.ControlPlaneAddresses
	// Publish writes cidrs to the source as the landscape's operators would; nil removes the source.
	Publish func(ctx context.Context, cidrs []string) error
	// PublishInvalid writes a source that holds something other than CIDRs.
	PublishInvalid func(ctx context.Context) error
}

// RunControlPlaneAddressesContract runs the contract against fixtures made by newFixture (one per subtest). Reads
// may lag behind writes (a cache), so results are awaited for a few seconds.
func RunControlPlaneAddressesContract(t *testing.T, newFixture func(t *testing.T) AddressesFixture) {
	await := func(t *testing.T, f AddressesFixture, want []string, wantErr error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := f.Addresses.EgressCIDRs(t.Context())
			ok := slices.Equal(got, want) && (wantErr == nil && err == nil || wantErr != nil && errors.Is(err, wantErr))
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("EgressCIDRs = %v, %v; want %v, %v", got, err, want, wantErr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Run("a missing source is no error and no addresses", func(t *testing.T) {
		await(t, newFixture(t), nil, nil)
	})
	t.Run("published CIDRs are returned in order, changes are seen", func(t *testing.T) {
		f := newFixture(t)
		if err := f.Publish(t.Context(), []string{"203.0.113.0/29", "198.51.100.7/32"}); err != nil {
			t.Fatal(err)
		}
		await(t, f, []string{"203.0.113.0/29", "198.51.100.7/32"}, nil)
		if err := f.Publish(t.Context(), []string{"192.0.2.0/24"}); err != nil {
			t.Fatal(err)
		}
		await(t, f, []string{"192.0.2.0/24"}, nil)
		if err := f.Publish(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		await(t, f, nil, nil)
	})
	t.Run("a source that is not CIDRs is ErrAddressesInvalid, never a shorter list", func(t *testing.T) {
		f := newFixture(t)
		if err := f.PublishInvalid(t.Context()); err != nil {
			t.Fatal(err)
		}
		await(t, f, nil, ports.ErrAddressesInvalid)
	})
}
