package contract

import (
	"context"
	"testing"

	"github.com/kyma-project/kim/core/ports"
)

// ResolverFixture is a resolver under test and the names its world holds.
type ResolverFixture struct {
	// Resolver answers from a world where Resolvable has an address and Missing does not exist.
	Resolver ports.UpstreamResolver
	// Resolvable is a host name with dots that has an address.
	Resolvable string
	// Missing is a host name with dots that does not exist.
	Missing string
	// Unanswered is the same kind of resolver as Resolver, but nothing answers its lookups (no DNS server, a
	// failing one): what the operator's own network looks like when it is broken.
	Unanswered ports.UpstreamResolver
}

// RunUpstreamResolverContract runs the UpstreamResolver contract against fixtures made by newFixture. The check of a
// registry cache's upstream reads the answer three ways: "" lets the cache through, a reason refuses it in the
// customer's condition, and an error skips the check. So a resolver must never say "" for a name it could not
// look up, and never give a reason for its own failure.
func RunUpstreamResolverContract(t *testing.T, newFixture func(t *testing.T) ResolverFixture) {
	t.Run("a name with an address resolves", func(t *testing.T) {
		f := newFixture(t)
		if why, err := f.Resolver.Resolve(t.Context(), f.Resolvable); why != "" || err != nil {
			t.Errorf("Resolve(%s) = %q, %v; want it to resolve", f.Resolvable, why, err)
		}
	})
	t.Run("an IP address resolves without a lookup", func(t *testing.T) {
		f := newFixture(t)
		for _, host := range []string{"127.0.0.1", "::1", "10.1.2.3"} {
			if why, err := f.Unanswered.Resolve(t.Context(), host); why != "" || err != nil {
				t.Errorf("Resolve(%s) without a DNS server = %q, %v; want it to resolve", host, why, err)
			}
		}
	})
	t.Run("a name that does not exist is refused with a reason, not an error", func(t *testing.T) {
		f := newFixture(t)
		if why, err := f.Resolver.Resolve(t.Context(), f.Missing); why == "" || err != nil {
			t.Errorf("Resolve(%s) = %q, %v; want a reason and no error", f.Missing, why, err)
		}
	})
	t.Run("a single-label name is refused without a lookup", func(t *testing.T) {
		// Only the operator pod's search domains could resolve it, to something inside the KCP.
		f := newFixture(t)
		for _, host := range []string{"localhost", "registry", "registry."} {
			if why, err := f.Unanswered.Resolve(t.Context(), host); why == "" || err != nil {
				t.Errorf("Resolve(%s) = %q, %v; want a reason and no error", host, why, err)
			}
		}
	})
	t.Run("a resolver that gets no answer fails instead of judging the name", func(t *testing.T) {
		f := newFixture(t)
		for _, host := range []string{f.Resolvable, f.Missing} {
			if why, err := f.Unanswered.Resolve(t.Context(), host); err == nil {
				t.Errorf("Resolve(%s) without an answer = %q, nil; want an error", host, why)
			}
		}
	})
	t.Run("a cancelled lookup fails instead of judging the name", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for _, host := range []string{f.Resolvable, f.Missing} {
			if why, err := f.Resolver.Resolve(ctx, host); err == nil {
				t.Errorf("Resolve(%s) with a cancelled context = %q, nil; want an error", host, why)
			}
		}
	})
}
