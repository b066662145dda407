package kube

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/ports"
)

func TestParseControlPlaneAddresses(t *testing.T) {
	cases := []struct {
		reason string
		data   map[string]string
		want   []string
		err    error
	}{
		{"the previous system's format", map[string]string{OperatorCIDRsKey: `["2.2.2.2/29","3.3.3.0/29"]`, KCPEgressKey: `"1.1.1.1/32"`},
			[]string{"2.2.2.0/29", "3.3.3.0/29", "1.1.1.1/32"}, nil},
		{"KCP egress as a list; duplicates once", map[string]string{OperatorCIDRsKey: `["1.1.1.1/32"]`, KCPEgressKey: `["1.1.1.1/32","4.4.4.4/32"]`},
			[]string{"1.1.1.1/32", "4.4.4.4/32"}, nil},
		{"other keys are ignored", map[string]string{"README": "x"}, nil, nil},
		{"not JSON", map[string]string{OperatorCIDRsKey: `1.1.1.1/32`}, nil, ports.ErrAddressesInvalid},
		{"not a CIDR", map[string]string{KCPEgressKey: `"1.1.1.1"`}, nil, ports.ErrAddressesInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got, err := ParseControlPlaneAddresses(tc.data)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
