package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kyma-project/kim/core/ports"
)

// ControlPlaneAddresses is an in-memory ports.ControlPlaneAddresses.
type ControlPlaneAddresses struct {
	mu      sync.Mutex
	cidrs   []string
	invalid bool
}

var _ ports.ControlPlaneAddresses = (*ControlPlaneAddresses)(nil)

// Publish makes cidrs the source's content; nil removes the source.
func (a *ControlPlaneAddresses) Publish(cidrs []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cidrs, a.invalid = slices.Clone(cidrs), false
}

// PublishInvalid makes the source unreadable as CIDRs.
func (a *ControlPlaneAddresses) PublishInvalid() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cidrs, a.invalid = nil, true
}

// EgressCIDRs implements ports.ControlPlaneAddresses.
func (a *ControlPlaneAddresses) EgressCIDRs(context.Context) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.invalid {
		return nil, fmt.Errorf("fake source: %w", ports.ErrAddressesInvalid)
	}
	return slices.Clone(a.cidrs), nil
}
