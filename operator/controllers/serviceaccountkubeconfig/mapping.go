package serviceaccountkubeconfig

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Request maps a ServiceAccountKubeconfig to the domain's request.
func Request(s *imv1.ServiceAccountKubeconfig) sakubeconfig.Request {
	req := sakubeconfig.Request{
		Owner:          sakubeconfig.Owner{Namespace: s.Namespace, Name: s.Name},
		Generation:     s.Generation,
		RuntimeID:      s.Spec.RuntimeID,
		ServiceAccount: sakubeconfig.ServiceAccount{Namespace: s.Spec.ServiceAccount.Namespace, Name: s.Spec.ServiceAccount.Name},
		Validity:       sakubeconfig.DefaultValidity,
		SecretName:     s.Spec.SecretName,
		Force:          s.Annotations[imv1.AnnotationForceKubeconfigRotation] == "true",
	}
	if s.Spec.Validity != nil {
		req.Validity = s.Spec.Validity.Duration
	}
	for _, r := range s.Spec.Rules {
		req.Rules = append(req.Rules, sakubeconfig.Rule{Namespaces: r.Namespaces, APIGroups: r.APIGroups, Resources: r.Resources,
			ResourceNames: r.ResourceNames, Verbs: r.Verbs})
	}
	if ref := s.Spec.ClusterRole; ref != nil {
		req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: ref.Name, Namespaces: ref.Namespaces}
	}
	return req
}

// State says what the status records of earlier work: the rules of this generation are applied when
// observedGeneration is the generation and the object is Ready for it.
func State(s *imv1.ServiceAccountKubeconfig) usecase.IdentityState {
	ready := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionReady)
	return usecase.IdentityState{
		Applied: s.Status.ObservedGeneration == s.Generation && ready != nil && ready.Status == metav1.ConditionTrue &&
			ready.ObservedGeneration == s.Generation,
		Held: len(s.Status.RuntimeObjects) > 0,
	}
}
