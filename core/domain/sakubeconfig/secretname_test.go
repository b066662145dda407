package sakubeconfig

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckRequestRefusesAdminKubeconfigNames: a ServiceAccountKubeconfig may not name any runtime's admin
// kubeconfig Secret (kubeconfig-<runtimeID>), not only its own runtime's: it could write kubeconfig-<other
// runtime> before that runtime's GardenerCluster does (or after it is gone) and hand KEB and lifecycle-manager a
// kubeconfig of its choosing. Nor a name of the operator's own Secrets (kim-*).
func TestCheckRequestRefusesAdminKubeconfigNames(t *testing.T) {
	req := func(secret string) Request {
		return Request{Owner: Owner{Namespace: "kcp-system", Name: "lm-rid"}, RuntimeID: "rid",
			ServiceAccount: ServiceAccount{Namespace: "kyma-system", Name: "lifecycle-manager"},
			Rules:          []Rule{{Namespaces: []string{"kyma-system"}, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
			Validity:       DefaultValidity, SecretName: secret}
	}
	for _, tc := range []struct {
		reason, secret string
		refused        bool
	}{
		{"its own runtime's admin kubeconfig", "kubeconfig-rid", true},
		{"another runtime's admin kubeconfig", "kubeconfig-91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43", true},
		{"a name that is only the prefix", "kubeconfig-", true},
		{"a name that merely contains kubeconfig", "lifecycle-manager-rid-kubeconfig", false},
		{"kubeconfig without the dash", "kubeconfigs-of-lm", false},
		{"the operator's Gardener kubeconfig", "kim-gardener-kubeconfig", true},
		{"any operator name", "kim-x", true},
		{"kim without the dash", "kimono", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			err := AccessPolicy{}.CheckRequest(req(tc.secret))
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) || !errors.Is(err, ErrInvalid) || r.Field != "spec.secretName" || r.Code != CodeInvalid ||
				!strings.Contains(r.Detail, tc.secret[:4]) {
				t.Fatalf("got %v, want an ErrInvalid refusal of spec.secretName naming the reserved prefix", err)
			}
		})
	}
}
