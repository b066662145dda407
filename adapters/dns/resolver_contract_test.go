package dns_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/dns"
)

// TestUpstreamResolverContract runs the contract against the real resolver, pointed at a DNS server of the test's
// own on a loopback port: the names and their answers are the test's, so it needs no network and no name server.
func TestUpstreamResolverContract(t *testing.T) {
	contract.RunUpstreamResolverContract(t, func(t *testing.T) contract.ResolverFixture {
		server := serveDNS(t, map[string]netip.Addr{"registry.contract.test.": netip.MustParseAddr("127.0.0.1")})
		// PreferGo: only Go's own resolver dials through Dial (the system's would ask the machine's name servers).
		through := func(dial func(ctx context.Context) (net.Conn, error)) *net.Resolver {
			return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}
		}
		var d net.Dialer
		return contract.ResolverFixture{
			Resolver: dns.Resolver{Timeout: 5 * time.Second, Resolver: through(func(ctx context.Context) (net.Conn, error) {
				return d.DialContext(ctx, "udp", server)
			})},
			Resolvable: "registry.contract.test", Missing: "nx.contract.test",
			Unanswered: dns.Resolver{Timeout: 5 * time.Second, Resolver: through(func(context.Context) (net.Conn, error) {
				return nil, errors.New("no DNS server answers")
			})},
		}
	})
}

// serveDNS answers queries on a loopback UDP port until the test ends and returns the address: a name in hosts has
// its address (an A record, or an AAAA record for an IPv6 address; the other type is an empty answer), every other
// name does not exist.
func serveDNS(t *testing.T, hosts map[string]netip.Addr) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for DNS queries: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return // closed at the end of the test
			}
			if reply, err := answer(buf[:n], hosts); err == nil {
				_, _ = conn.WriteTo(reply, from)
			}
		}
	}()
	return conn.LocalAddr().String()
}

// answer builds the reply to one query from hosts.
func answer(query []byte, hosts map[string]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	reply := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired},
		Questions: []dnsmessage.Question{q},
	}
	addr, known := hosts[q.Name.String()]
	head := dnsmessage.ResourceHeader{Name: q.Name, Type: q.Type, Class: dnsmessage.ClassINET, TTL: 60}
	switch {
	case !known:
		reply.RCode = dnsmessage.RCodeNameError
	case q.Type == dnsmessage.TypeA && addr.Is4():
		reply.Answers = []dnsmessage.Resource{{Header: head, Body: &dnsmessage.AResource{A: addr.As4()}}}
	case q.Type == dnsmessage.TypeAAAA && addr.Is6():
		reply.Answers = []dnsmessage.Resource{{Header: head, Body: &dnsmessage.AAAAResource{AAAA: addr.As16()}}}
	}
	return reply.Pack()
}
