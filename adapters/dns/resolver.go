// Package dns implements ports.UpstreamResolver with the system's resolver.
package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kyma-project/kim/core/ports"
)

// DefaultTimeout bounds one lookup.
const DefaultTimeout = 3 * time.Second

// Resolver looks host names up with net.Resolver.
type Resolver struct {
	// Resolver is the resolver to use; nil: net.DefaultResolver.
	Resolver *net.Resolver
	// Timeout bounds one lookup; zero: DefaultTimeout.
	Timeout time.Duration
}

var _ ports.UpstreamResolver = Resolver{}

// absolute is host as a fully qualified name (a trailing dot), so the resolver never appends the pod's search
// domains (a customer's "registry.local" must not resolve to a KCP-internal registry.local.kcp-system.svc...);
// false for a single-label name, which only search domains could resolve.
func absolute(host string) (string, bool) {
	name := strings.TrimSuffix(host, ".")
	if name == "" || !strings.Contains(name, ".") {
		return "", false
	}
	return name + ".", true
}

// Resolve implements ports.UpstreamResolver: "" when the host has an address, the resolver's answer when it has
// none (the name does not exist), and an error when the resolver could not answer (timeout, no DNS server): the
// caller then skips the check rather than refusing a customer's cache because of the operator's network.
func (r Resolver) Resolve(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return "", nil
	}
	res, timeout := r.Resolver, r.Timeout
	if res == nil {
		res = net.DefaultResolver
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	name, ok := absolute(host)
	if !ok {
		return "a single-label name is not resolved (it would go through the operator's search domains)", nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := res.LookupHost(ctx, name)
	var dnsErr *net.DNSError
	switch {
	case err == nil && len(addrs) > 0:
		return "", nil
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host", nil
	case err == nil:
		return "no addresses", nil
	}
	return "", fmt.Errorf("resolve %s: %w", host, err)
}
