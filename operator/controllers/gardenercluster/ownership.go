package gardenercluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Reasons of a GardenerCluster that asks for something the operator refuses. They are part of the API.
const (
	// ReasonSecretNotOwned: the named Secret exists and belongs to someone else; it is left byte-identical.
	ReasonSecretNotOwned = "SecretNotOwned"
	// ReasonSecretNamespace: the named Secret is in another namespace than the GardenerCluster.
	ReasonSecretNamespace = "SecretInOtherNamespace"
	// ReasonShootNotOfRuntime: the named shoot belongs to another runtime, or to a deleted one.
	ReasonShootNotOfRuntime = "ShootNotOfRuntime"
)

// retryRefused is how often a refused GardenerCluster is looked at again without an event (a person may have
// fixed the Secret; changes of the GardenerCluster itself trigger at once).
const retryRefused = 10 * time.Minute

// existing turns the store's metadata into what kubeconfig.CheckSecret looks at; nil when there is no Secret.
func existing(md ports.KubeconfigSecretMetadata, err error) (*kubeconfig.ExistingSecret, error) {
	switch {
	case errors.Is(err, ports.ErrSecretNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &kubeconfig.ExistingSecret{Name: md.Name, Labels: md.Labels, Annotations: md.Annotations}, nil
}

// shootRef reads the shoot the GardenerCluster names from the garden cache and checks that it may hand out its
// kubeconfig. A shoot not in the cache is no refusal: Gardener answers NotFound when asked.
func (r *Reconciler) shootRef(ctx context.Context, gc *imv1.GardenerCluster) (kubeconfig.ShootRef, error) {
	name := gc.Spec.Shoot.Name
	if r.Shoots == nil {
		return kubeconfig.ShootRef{Name: name}, nil
	}
	s, err := r.Shoots.Get(ctx, name, ports.ReadCached)
	if err != nil {
		return kubeconfig.ShootRef{}, fmt.Errorf("read shoot %s: %w", name, err)
	}
	if !s.Exists {
		return kubeconfig.ShootRef{Name: name}, nil
	}
	id := kubeconfig.ShootIdentity{Ref: kubeconfig.ShootRef{Name: name, UID: s.UID}, RuntimeID: s.Marks.RuntimeID}
	if pd := s.Marks.PendingDeletion; s.Marks.Managed && pd != nil {
		id.PendingDeletionOf = pd.RuntimeID
	}
	return id.Ref, kubeconfig.CheckShoot(gc.Name, id)
}

// refuse records why nothing is written for the GardenerCluster. It is Failed for the cluster, not an error of the
// reconcile: repeating it cannot help until a person changes the GardenerCluster or the Secret.
func (r *Reconciler) refuse(gc *imv1.GardenerCluster, err error) {
	reason := ReasonSecretNotOwned
	switch {
	case errors.Is(err, kubeconfig.ErrSecretOtherNamespace):
		reason = ReasonSecretNamespace
	case errors.Is(err, kubeconfig.ErrShootOfAnotherRuntime), errors.Is(err, kubeconfig.ErrShootPendingDeletion):
		reason = ReasonShootNotOfRuntime
	}
	msg := fmt.Sprintf("No kubeconfig is written: %v. Fix spec.kubeconfig.secret or spec.shoot.name of this GardenerCluster.", err)
	setCondition(gc, imv1.GardenerClusterStateError, metav1.ConditionFalse, reason, msg)
	r.Recorder.Eventf(gc, nil, "Warning", reason, "CheckOwnership", msg)
}
