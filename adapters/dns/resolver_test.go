package dns

import (
	"context"
	"testing"
)

func TestResolve(t *testing.T) {
	r := Resolver{}
	for _, host := range []string{"127.0.0.1", "::1"} {
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

// TestSingleLabelAndSearchDomains: a single-label name is never looked up (only the operator pod's search domains
// could resolve it, to something in the KCP), and every other name is looked up as an absolute name (trailing dot).
func TestSingleLabelAndSearchDomains(t *testing.T) {
	for _, host := range []string{"localhost", "registry", "registry."} {
		if why, err := (Resolver{}).Resolve(context.Background(), host); err != nil || why == "" {
			t.Errorf("%s: %q, %v; want it refused", host, why, err)
		}
	}
	for host, want := range map[string]string{"docker.io": "docker.io.", "registry.example.com.": "registry.example.com."} {
		if got, ok := absolute(host); !ok || got != want {
			t.Errorf("absolute(%s) = %q, %v; want %q", host, got, ok, want)
		}
	}
}
