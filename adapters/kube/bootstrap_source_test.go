package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// TestBootstrapSourcePullSecret: only a kubernetes.io/dockerconfigjson Secret carrying the opt-in label is copied;
// any other Secret the configuration names (a runtime's kubeconfig, the Gardener credential) refuses the whole set
// with a stable reason, so nothing of it is applied.
func TestBootstrapSourcePullSecret(t *testing.T) {
	optIn := map[string]string{runtimeconfig.LabelBootstrapPullSecret: "true"}
	cases := map[string]struct {
		typ       corev1.SecretType
		labels    map[string]string
		wantProbl string
	}{
		"labelled dockerconfigjson":             {typ: corev1.SecretTypeDockerConfigJson, labels: optIn},
		"a kubeconfig Secret, labelled":         {typ: corev1.SecretTypeOpaque, labels: optIn, wantProbl: `type "Opaque"`},
		"dockerconfigjson without the opt-in":   {typ: corev1.SecretTypeDockerConfigJson, wantProbl: runtimeconfig.LabelBootstrapPullSecret},
		"a service account token, not labelled": {typ: corev1.SecretTypeServiceAccountToken, wantProbl: "refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "kim-bootstrap"},
				Data: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"}}
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "pull", Labels: tc.labels}, Type: tc.typ,
				Data: map[string][]byte{"k": []byte("v")}}
			c := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cm, sec).Build()
			src := &BootstrapSource{Reader: c, ConfigMap: client.ObjectKeyFromObject(cm), PullSecret: &client.ObjectKey{Namespace: "kcp-system", Name: "pull"}}
			b, err := src.Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantProbl == "" {
				if b.Problem != "" || b.PullSecret == nil || len(b.Objects) != 1 {
					t.Errorf("accepted secret: problem %q, pull secret %v, %d objects", b.Problem, b.PullSecret, len(b.Objects))
				}
				return
			}
			if !strings.Contains(b.Problem, tc.wantProbl) || b.ProblemReason != runtimeconfig.ReasonBootstrapPullSecretRefused {
				t.Errorf("problem %q (%s), want %s containing %q", b.Problem, b.ProblemReason, runtimeconfig.ReasonBootstrapPullSecretRefused, tc.wantProbl)
			}
			if b.PullSecret != nil || len(b.Objects) != 0 {
				t.Errorf("a refused set carries the secret (%v) or objects (%d)", b.PullSecret, len(b.Objects))
			}
			if o := b.ProblemOutcome(); o.Reason != runtimeconfig.ReasonBootstrapPullSecretRefused || o.Done {
				t.Errorf("outcome %+v", o)
			}
		})
	}
}
