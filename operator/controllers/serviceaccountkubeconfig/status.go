package serviceaccountkubeconfig

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// reasonDeleting is the Ready reason while the runtime objects and the Secret are removed.
const reasonDeleting = "Deleting"

// setStatus maps a use case result to the status. A result without reason (a failure retried with backoff) leaves
// the status as it is.
func setStatus(s *imv1.ServiceAccountKubeconfig, res usecase.IdentityResult) {
	if res.ObjectsChanged {
		s.Status.RuntimeObjects = make([]imv1.RuntimeObjectReference, 0, len(res.Objects))
		for _, o := range res.Objects {
			s.Status.RuntimeObjects = append(s.Status.RuntimeObjects, imv1.RuntimeObjectReference{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name})
		}
		if len(res.Objects) == 0 {
			s.Status.SecretName, s.Status.ExpiresAt = "", nil
		}
	}
	if res.Observed {
		s.Status.ObservedGeneration = s.Generation
	}
	if !res.ExpiresAt.IsZero() {
		t := metav1.NewTime(res.ExpiresAt)
		s.Status.ExpiresAt = &t
	}
	switch {
	case res.Reason == "":
		return
	case res.Ready:
		s.Status.SecretName = s.Spec.SecretName
		s.Status.State = imv1.ServiceAccountKubeconfigStateReady
		// A valid kubeconfig is nothing new: the condition keeps what last happened (issued, rotated, rules applied).
		skeleton.SetCondition(&s.Status.Conditions, imv1.ConditionReady, s.Generation, skeleton.Outcome{OK: true,
			Reason: res.Reason, Message: res.Message, Keep: res.Reason == sakubeconfig.ReasonKubeconfigValid})
		setKStatus(s)
	case res.Reason == sakubeconfig.ReasonWaitingForRuntime:
		setNotReady(s, imv1.ServiceAccountKubeconfigStatePending, res.Reason, res.Message)
	default:
		setNotReady(s, imv1.ServiceAccountKubeconfigStateError, res.Reason, res.Message)
	}
}

// setNotReady records a state and the False Ready condition of a domain outcome that is not a success, through the
// skeleton's one condition writer.
func setNotReady(s *imv1.ServiceAccountKubeconfig, state imv1.ServiceAccountKubeconfigState, reason, msg string) {
	s.Status.State = state
	skeleton.SetCondition(&s.Status.Conditions, imv1.ConditionReady, s.Generation, skeleton.Outcome{Reason: reason, Message: msg})
	setKStatus(s)
}

// setKStatus sets kstatus' abnormal-true conditions (sigs.k8s.io/cli-utils, what Flux, Argo CD and kpt health checks
// run) with Ready's reason and message: Stalled while the request waits for a person (a refusal, an invalid request,
// a clash with an object it does not own), Reconciling while the operator retries on its own, neither when Ready or
// Deleting (a deletion is Terminating by its timestamp). Only a condition that applies is kept, as kstatus expects.
func setKStatus(s *imv1.ServiceAccountKubeconfig) {
	ready := meta.FindStatusCondition(s.Status.Conditions, imv1.ConditionReady)
	if ready == nil || ready.Status == metav1.ConditionTrue || s.Status.State == imv1.ServiceAccountKubeconfigStateDeleting {
		skeleton.SetKStatus(&s.Status.Conditions, s.Generation, false, false, "", "", time.Time{})
		return
	}
	stalled := sakubeconfig.WaitsForAPerson(ready.Reason)
	skeleton.SetKStatus(&s.Status.Conditions, s.Generation, !stalled, stalled, ready.Reason, ready.Message, time.Time{})
}
