package auditlog

import (
	"errors"
	"testing"

	"github.com/kyma-project/kim/core/domain/wire"
)

// TestCheckReadCredentials: only a Secret of the pool's namespace that opted in for exactly this tenant is copied
// into a runtime; another runtime's admin kubeconfig, the operator's Gardener credentials and anything it manages
// never are, whatever their labels say.
func TestCheckReadCredentials(t *testing.T) {
	p := CredentialsPolicy{Namespace: "kcp-system", OperatorSecrets: []string{"kim-gardener-kubeconfig"}}
	optIn := func(auditLog string) map[string]string { return map[string]string{LabelReadCredentials: auditLog} }
	for _, tc := range []struct {
		reason, tenant, ns, name string
		labels                   map[string]string
		policy                   *CredentialsPolicy
		want                     CredentialsReason // "" allowed
	}{
		{reason: "opted in for this tenant", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "al-0001-r", labels: optIn("al-0001")},
		{reason: "a cluster-scoped tenant", tenant: "al-0001", ns: "kcp-system", name: "al-0001-r", labels: optIn("al-0001")},
		{reason: "no opt-in", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "al-0001-r", want: CredentialsNotOptedIn},
		{reason: "opted in for another tenant", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "al-0002-r", labels: optIn("al-0002"),
			want: CredentialsNotOptedIn},
		{reason: "an empty opt-in", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "al-0001-r", labels: optIn(""), want: CredentialsNotOptedIn},
		{reason: "another runtime's admin kubeconfig, even labelled", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "kubeconfig-victim",
			labels: optIn("al-0001"), want: CredentialsKubeconfig},
		{reason: "the operator's Gardener credentials, even labelled", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "kim-gardener-kubeconfig",
			labels: optIn("al-0001"), want: CredentialsOperatorSecret},
		{reason: "a Secret the operator manages, even labelled", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "lm-kubeconfig",
			labels: map[string]string{LabelReadCredentials: "al-0001", wire.LabelManagedBy: wire.ManagedByValue}, want: CredentialsOperatorSecret},
		{reason: "another namespace, even labelled", tenant: "kcp-system/al-0001", ns: "kube-system", name: "al-0001-r",
			labels: optIn("al-0001"), want: CredentialsOtherNamespace},
		{reason: "no namespace configured: nothing is copied", tenant: "kcp-system/al-0001", ns: "kcp-system", name: "al-0001-r",
			labels: optIn("al-0001"), policy: &CredentialsPolicy{}, want: CredentialsOtherNamespace},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			pol := p
			if tc.policy != nil {
				pol = *tc.policy
			}
			err := pol.CheckReadCredentials(tc.tenant, tc.ns, tc.name, tc.labels)
			var r *CredentialsRefusal
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case !errors.As(err, &r) || !errors.Is(err, ErrCredentialsRefused):
				t.Fatalf("got %v, want a refusal %s", err, tc.want)
			case r.Reason != tc.want:
				t.Fatalf("reason %s (%v), want %s", r.Reason, err, tc.want)
			}
		})
	}
}
