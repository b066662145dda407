package gardener

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// Adopt implements ports.ShootProvisioner with a merge patch that only adds the managed-by label (and, on a shoot of
// the provisioner, which names its runtime in its own annotation, the operator's runtime-id annotation, so that the
// shoot carries the marks every later write checks). It reads the shoot live and retries on conflicts (Gardener
// updates new shoots often); adoption is rare, a migration step.
func (c *Shoots) Adopt(ctx context.Context, name, runtimeID, plan string) (shootstate.Shoot, error) {
	var adopted *gardencorev1beta1.Shoot
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		s := &gardencorev1beta1.Shoot{}
		if err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s); err != nil {
			return err
		}
		if owner, _ := translate.RuntimeIDOf(s.Annotations); owner != runtimeID || (s.Labels[wire.LabelManagedBy] != "" && s.Labels[wire.LabelManagedBy] != wire.ManagedByValue) {
			return fmt.Errorf("runtime-id annotation %q, managed-by label %q, not runtime %s: %w", owner, s.Labels[wire.LabelManagedBy], runtimeID, ports.ErrShootNotManaged)
		}
		adopted = s
		if s.Labels[wire.LabelManagedBy] == wire.ManagedByValue && s.Annotations[shoot.AnnotationRuntimeID] == runtimeID {
			return nil
		}
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		metav1.SetMetaDataLabel(&s.ObjectMeta, wire.LabelManagedBy, wire.ManagedByValue)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, shoot.AnnotationRuntimeID, runtimeID)
		if s.Annotations[AnnotationPlan] == "" && plan != "" {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationPlan, plan)
		}
		return c.Client.Patch(ctx, s, patch, client.FieldOwner(FieldManager)) // a conflict is retried with a fresh read
	})
	if err != nil {
		return shootstate.Shoot{}, c.record("patch", classify("adopt shoot "+name, err))
	}
	return live(adopted), nil
}
