package mapping

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RestoreDocument renders a Runtime as the document recorded on its shoot: identity, labels and spec, without
// status, server fields or secrets (OIDC client secrets never go to the garden).
func RestoreDocument(rt *imv1.Runtime) ([]byte, error) {
	doc := imv1.Runtime{
		TypeMeta:   metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime"},
		ObjectMeta: metav1.ObjectMeta{Name: rt.Name, Namespace: rt.Namespace, Labels: rt.Labels},
		Spec:       *rt.Spec.DeepCopy(),
	}
	api := &doc.Spec.Shoot.Kubernetes.KubeAPIServer
	api.OidcConfig.ClientAuthentication = nil
	if api.AdditionalOidcConfig != nil {
		for i := range *api.AdditionalOidcConfig {
			(*api.AdditionalOidcConfig)[i].ClientAuthentication = nil
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode restore document of runtime %s: %w", rt.Name, err)
	}
	return raw, nil
}
