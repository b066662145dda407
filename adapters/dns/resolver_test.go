package dns

import (
	"context"
	"testing"
)

func TestResolve(t *testing.T) {
	r := Resolver{}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if why, err := r.Resolve(context.Background(), host); err != nil || why != "" {
			t.Errorf("%s: %q, %v; want it to resolve", host, why, err)
		}
	}
	// .invalid never resolves (RFC 6761). Without a DNS server the resolver may fail instead of answering: then the
	// check is skipped (an error), but it must never claim the name resolves.
	why, err := r.Resolve(context.Background(), "registry.example.invalid")
	if err == nil && why == "" {
		t.Errorf("registry.example.invalid resolved")
	}
}
