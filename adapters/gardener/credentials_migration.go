package gardener

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

var _ ports.CredentialsMigrator = (*Shoots)(nil)

// MigrateToCredentialsBinding implements ports.CredentialsMigrator with an update of the live shoot (retried on
// conflicts: Gardener writes new shoots often). Server-side apply cannot do it: secretBindingName is owned by the
// manager that created the shoot, and an apply that only sets credentialsBindingName is rejected while
// secretBindingName is still set.
func (c *Shoots) MigrateToCredentialsBinding(ctx context.Context, name, binding string) (bool, error) {
	migrated := false
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		migrated = false
		s := &gardencorev1beta1.Shoot{}
		if err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s); err != nil {
			return err
		}
		if s.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
			return ports.ErrShootNotManaged
		}
		if s.Spec.SecretBindingName == nil || *s.Spec.SecretBindingName == "" { //nolint:staticcheck // migrating away from it
			return nil
		}
		s.Spec.SecretBindingName = nil //nolint:staticcheck // migrating away from it
		s.Spec.CredentialsBindingName = &binding
		migrated = true
		return c.Client.Update(ctx, s, client.FieldOwner(FieldManager))
	})
	if err != nil {
		return false, c.record("update", classify(fmt.Sprintf("switch shoot %s to credentials binding %s", name, binding), err))
	}
	return migrated, nil
}
